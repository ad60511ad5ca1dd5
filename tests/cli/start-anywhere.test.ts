import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { outputOf } from "../fakes/process-output.ts";

// Each test starts bun processes: about a second alone, several on a loaded 2-core machine.
setDefaultTimeout(60_000);

// A service unit without WorkingDirectory= starts its command from `/`: every script must work
// from there, with the database given by absolute path.
const ROOT = join(import.meta.dir, "..", "..");
const dir = mkdtempSync(join(tmpdir(), "start-anywhere-"));
const DATABASE_URL = join(dir, "app.db");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function spawnFromRoot(script: string, args: string[]) {
  return Bun.spawn(["bun", join(ROOT, "scripts", `${script}.ts`), ...args], {
    cwd: "/",
    env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "", DATABASE_URL },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
}

/** Reads a child's stream until a line matches, returning the match. */
async function lineMatching(stream: ReadableStream<Uint8Array>, pattern: RegExp): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  for await (const chunk of stream) {
    text += decoder.decode(chunk, { stream: true });
    const found = text.match(pattern);
    if (found) return found[1] ?? found[0];
  }
  throw new Error(`The child ended without printing ${pattern}; it printed: ${text}`);
}

describe("started from / (as a unit without WorkingDirectory= would)", () => {
  test("the app serves its admin pages, rendered from JSX", async () => {
    const app = spawnFromRoot("app", ["--port", "0"]);
    try {
      const url = await lineMatching(app.stderr, /Inventory app on (http:\/\/\S+);/);
      const page = await fetch(`${url}/admin/webhooks`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain("<h1>Webhooks</h1>");
    } finally {
      app.kill("SIGTERM");
      await app.exited;
    }
  });

  test("the admin CLI and a worker run against the same database", async () => {
    const add = await outputOf(
      spawnFromRoot("webhooks", ["add", "--name", "anywhere", "--url", "https://example.test/h"]),
    );
    expect(add.stderr).not.toContain("Cannot find module");
    expect(add.code).toBe(0);
    const list = await outputOf(spawnFromRoot("webhooks", ["list", "--json"]));
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout).map((w: { name: string }) => w.name)).toEqual(["anywhere"]);
    const worker = await outputOf(spawnFromRoot("worker", ["--once"]));
    expect(worker.stderr).not.toContain("Cannot find module");
    expect(worker.code).toBe(0);
  });

  test.each(["receiver", "digest", "demo"])("%s --help prints its help", async (script) => {
    const { code, stdout, stderr } = await outputOf(spawnFromRoot(script, ["--help"]));
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toContain("Usage:");
  });
});
