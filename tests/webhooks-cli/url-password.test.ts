import { afterEach, beforeEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCommand } from "citty";
import { openSqliteStore } from "../../lib/store/sqlite/store.ts";
import type { Store } from "../../lib/webhooks/ports.ts";
import { createWebhooksCommand } from "../../lib/webhooks-cli/command.ts";
import { change } from "../fakes/change.ts";
import { record } from "../store/contract.ts";

const T0 = Date.UTC(2030, 0, 1);
const URL_WITH_PASSWORD = "https://user:s3cret-pw@hook.example/in/{{ data.id }}";
const MASKED = "https://user:***@hook.example/in/{{ data.id }}";

let dir: string;
let path: string;
let store: Store;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "webhooks-cli-mask-"));
  path = join(dir, "app.db");
  store = openSqliteStore(path, { now: () => T0 });
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function cli(...rawArgs: string[]): Promise<string> {
  const lines: string[] = [];
  const command = createWebhooksCommand({
    env: { DATABASE_URL: path },
    out: (text) => lines.push(text),
    err: (text) => lines.push(text),
    now: () => T0,
    generateSecret: () => "whsec_dGVzdHRlc3R0ZXN0dGVzdHRlc3R0ZXN0",
  });
  await runCommand(command, { rawArgs });
  return lines.join("\n");
}

test("webhooks add, list and list --json show the URL's password as ***; it is stored as given", async () => {
  const added = await cli("add", "--name", "erp", "--url", URL_WITH_PASSWORD);
  expect(added).toContain(`POST ${MASKED}, events *`);
  const list = await cli("list");
  expect(list).toContain(MASKED);
  const listed = JSON.parse(await cli("list", "--json")) as Array<{ url: string }>;
  expect(listed.map((w) => w.url)).toEqual([MASKED]);
  for (const output of [added, list]) expect(output).not.toContain("s3cret-pw");
  expect((await store.webhooks.get(1))?.url).toBe(URL_WITH_PASSWORD);
});

test("webhooks update --url with *** keeps the stored password for the same host, not for another", async () => {
  await store.webhooks.create({ name: "erp", url: URL_WITH_PASSWORD });
  const updated = await cli("update", "erp", "--url", "https://user:***@hook.example/v2");
  expect(updated).toContain("POST https://user:***@hook.example/v2,");
  expect((await store.webhooks.get(1))?.url).toBe("https://user:s3cret-pw@hook.example/v2");
  await cli("update", "erp", "--url", "https://user:***@elsewhere.example/v2");
  expect((await store.webhooks.get(1))?.url).toBe("https://user:***@elsewhere.example/v2");
});

test("webhooks show (text and --json) masks the delivery's and each attempt's URL and error", async () => {
  const webhook = await store.webhooks.create({ name: "erp", url: URL_WITH_PASSWORD });
  await store.queue.enqueue(change());
  const [claim] = await store.queue.claim({ workerId: "w", limit: 1, leaseMs: 1000, now: T0 });
  if (!claim) throw new Error("nothing to claim");
  expect(claim.delivery.url).toBe("https://user:s3cret-pw@hook.example/in/1");
  await store.queue.finish(
    claim,
    record({
      statusCode: null,
      outcome: "network_error",
      url: claim.delivery.url,
      error: "fetch https://user:s3cret-pw@hook.example/in/1 failed",
    }),
    { state: "failed" },
  );
  const shown = await cli("show", String(claim.delivery.id));
  expect(shown).toContain("url         https://user:***@hook.example/in/1");
  expect(shown).toContain("to https://user:***@hook.example/in/1");
  expect(shown).toContain("fetch https://user:***@hook.example/in/1 failed");
  expect(shown).not.toContain("s3cret-pw");
  const json = await cli("show", String(claim.delivery.id), "--json");
  expect(json).not.toContain("s3cret-pw");
  expect(JSON.parse(json)).toMatchObject({
    webhookId: webhook.id,
    url: "https://user:***@hook.example/in/1",
    attempts: [{ url: "https://user:***@hook.example/in/1" }],
  });
});
