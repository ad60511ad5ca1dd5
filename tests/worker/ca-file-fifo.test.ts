import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStore } from "../../lib/store/sqlite/store.ts";
import { change } from "../fakes/change.ts";
import { startFakeEndpoint } from "../fakes/webhook-endpoint.ts";
import { spawnWorker } from "../fakes/worker-process.ts";

// A worker stuck on the FIFO never ends: the test's timeout is what fails then.
setDefaultTimeout(60_000);

const ROOT = join(import.meta.dir, "..", "..");
const CA_FILE = join(ROOT, "tests", "fakes", "tls", "hook-test.crt");

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Two webhooks: one whose CA file is a FIFO, one with a good CA file; 40 changes for both. */
async function setup() {
  const dir = mkdtempSync(join(tmpdir(), "ca-fifo-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const fifo = join(dir, "ca.pem");
  // Saved as a file, replaced by a FIFO later (the check when saving cannot see the future).
  expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
  const path = join(dir, "app.db");
  const store = openSqliteStore(path);
  cleanups.push(() => store.close());
  const endpoint = startFakeEndpoint(() => new Response("ok"));
  cleanups.push(() => endpoint.stop());
  const jammed = await store.webhooks.create({ name: "jammed", url: endpoint.url, caFile: fifo });
  // Its CA file is read too (for a plain http URL it is then unused): the same file threads.
  const healthy = await store.webhooks.create({
    name: "healthy",
    url: endpoint.url,
    caFile: CA_FILE,
  });
  // More deliveries than the runtime has threads for file reads (a blocked open holds one each).
  for (let i = 0; i < 40; i++) await store.queue.enqueue(change());
  return { fifo, path, store, endpoint, jammed, healthy };
}

function startWorker(path: string, args: string[]) {
  return spawnWorker(path, {
    env: { WEBHOOK_MAX_ATTEMPTS: "1", WEBHOOK_TIMEOUT_MS: "1000" },
    args,
    cleanups,
  });
}

test("`worker --once`: a FIFO as one webhook's CA file fails its deliveries at once; another webhook with a good CA file is sent, the process exits", async () => {
  const { fifo, path, store, endpoint, jammed, healthy } = await setup();
  expect(await startWorker(path, ["--once"]).exited).toBe(0);

  const sent = await store.queue.list({ webhookId: healthy.id, limit: 100 });
  expect(sent.map((d) => d.state)).toEqual(Array(40).fill("successful"));
  expect(endpoint.requests).toHaveLength(40);
  const failed = await store.queue.list({ webhookId: jammed.id, limit: 100 });
  expect(failed).toHaveLength(40);
  for (const delivery of failed) {
    expect(delivery.state).toBe("failed");
    expect(delivery.lastError).toBe(
      `Could not read the CA file "${fifo}": not a regular file (a FIFO)`,
    );
  }
});

test("`worker`: after the FIFO CA file's deliveries failed, SIGTERM stops it", async () => {
  const { path, store, endpoint, jammed } = await setup();
  const child = startWorker(path, []);
  await endpoint.waitForRequests(40);
  // Every jammed delivery attempted (failed) before the signal: its file reads are behind us.
  while ((await store.queue.stats()).failed < 40) {
    await store.waitForChange({ timeoutMs: 1000 });
  }
  expect((await store.queue.list({ webhookId: jammed.id, state: "failed" })).length).toBe(40);
  child.kill("SIGTERM");
  expect(await child.exited).toBe(0);
});
