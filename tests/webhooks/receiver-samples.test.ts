/**
 * The receiver samples in docs/webhooks.md, run as written: each verifies this project's own
 * signatures (standardWebhookHeaders, what the worker sends), a rotation's two signatures, and
 * refuses a changed body, a wrong secret and a stale timestamp. A sample that drifts from the
 * signing fails here, not in a reader's hands.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { standardWebhookHeaders } from "../../lib/webhooks/sending/signing.ts";
import { hasTool } from "../fakes/system-tools.ts";
import { tempDirs } from "../fakes/temp-dirs.ts";

const ROOT = join(import.meta.dir, "..", "..");
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const OTHER = "whsec_dGhlIG90aGVyIHNlY3JldCBvZiB0aGlzIHRlc3Q=";

/** The fenced block of `language` in the docs' receiver section. */
function sample(language: string): string {
  const doc = readFileSync(join(ROOT, "docs", "webhooks.md"), "utf8");
  const start = doc.indexOf("### A receiver that verifies signatures");
  const section = doc.slice(start, doc.indexOf("\n## ", start));
  const block = section.match(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``));
  if (block?.[1] === undefined) throw new Error(`docs/webhooks.md has no ${language} receiver`);
  return block[1];
}

const tempDir = tempDirs("receiver-sample-");
const children: Subprocess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill();
});

/** Starts a sample on a free port; resolves with its URL once it says where it listens. */
async function start(command: string[], cwd: string): Promise<{ url: string; lines: string[] }> {
  const child = Bun.spawn(command, {
    cwd,
    env: { ...process.env, WEBHOOK_SECRET: SECRET, PORT: "0" },
    stdout: "pipe",
    stderr: "ignore",
  });
  children.push(child);
  const lines: string[] = [];
  const decoder = new TextDecoder();
  const reader = child.stdout.getReader();
  let buffered = "";
  const port = await new Promise<string>((resolve, reject) => {
    (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return reject(new Error(`${command.join(" ")} ended before listening`));
        buffered += decoder.decode(value, { stream: true });
        const parts = buffered.split("\n");
        buffered = parts.pop() ?? "";
        for (const line of parts) {
          const listening = line.match(/^listening on (\d+)$/);
          if (listening?.[1]) resolve(listening[1]);
          else lines.push(line);
        }
      }
    })();
  });
  return { url: `http://127.0.0.1:${port}/`, lines };
}

function signed(body: string, options: { secret?: string; at?: number; id?: string } = {}) {
  return standardWebhookHeaders({
    secret: options.secret ?? SECRET,
    messageId: options.id ?? "msg_2f4WbqlGxKCVdcHTqIqz0A5l",
    timestamp: options.at ?? Date.now() / 1000,
    body,
  });
}

const BODY = '{"event":"created","model":"item","data":{"id":7,"name":"Widget"}}';

async function post(url: string, body: string, headers: Record<string, string>) {
  const response = await fetch(url, {
    method: "POST",
    body,
    headers: { "content-type": "application/json", ...headers },
  });
  await response.arrayBuffer();
  return response.status;
}

/** What every sample must do, whatever its language. */
async function checkSample(url: string) {
  expect(await post(url, BODY, signed(BODY))).toBe(204);
  // A rotation's grace: the previous secret's signature first, this secret's second.
  const old = signed(BODY, { secret: OTHER })["webhook-signature"];
  const both = signed(BODY);
  both["webhook-signature"] = `${old} ${both["webhook-signature"]}`;
  expect(await post(url, BODY, both)).toBe(204);
  expect(await post(url, BODY.replace("7", "8"), signed(BODY))).toBe(401);
  expect(await post(url, BODY, signed(BODY, { secret: OTHER }))).toBe(401);
  expect(await post(url, BODY, signed(BODY, { at: Date.now() / 1000 - 600 }))).toBe(401);
  expect(await post(url, BODY, {})).toBe(401);
}

describe("docs/webhooks.md's receiver samples", () => {
  test("the TypeScript sample verifies signatures and acts on each webhook-id once", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "receiver.ts"), sample("ts"));
    symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
    const { url, lines } = await start([process.execPath, "receiver.ts"], dir);
    await checkSample(url);
    expect(lines).toEqual(["msg_2f4WbqlGxKCVdcHTqIqz0A5l item created 7"]);
  });

  test.skipIf(!hasTool("python3", "receiver samples"))(
    "the Python sample verifies signatures and acts on each webhook-id once",
    async () => {
      const dir = tempDir();
      writeFileSync(join(dir, "receiver.py"), sample("python"));
      const { url, lines } = await start(["python3", "-u", "receiver.py"], dir);
      await checkSample(url);
      expect(lines).toEqual(["msg_2f4WbqlGxKCVdcHTqIqz0A5l item created 7"]);
    },
  );
});
