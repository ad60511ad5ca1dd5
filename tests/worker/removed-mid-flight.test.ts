import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { openPostgresStore } from "../../lib/store/postgres/store.ts";
import { openSqliteStore } from "../../lib/store/sqlite/store.ts";
import type { Store } from "../../lib/webhooks/ports.ts";
import { itemChange } from "../fakes/change.ts";
import { describePostgres, usePostgresCluster } from "../fakes/postgres-cluster.ts";
import { tempDirs } from "../fakes/temp-dirs.ts";
import { gate, startFakeEndpoint } from "../fakes/webhook-endpoint.ts";
import { spawnWorker } from "../fakes/worker-process.ts";

// A worker process, and a wait for every delivery to end.
setDefaultTimeout(60_000);

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const IN_FLIGHT = 8;
const NEW_CHANGES = 40;

/** Polls (the worker is another process) until `done`, for at most 30 s. */
async function until(done: () => Promise<boolean>): Promise<void> {
  const deadline = performance.now() + 30_000;
  while (!(await done()) && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * A webhook removed while its requests are in flight, and new changes queued at once for
 * another: the worker claims the new deliveries (its prefetch) before the old requests are
 * answered. On SQLite the new deliveries once took the removed ones' ids, and the late results'
 * fence (id, owner, generation) matched: new deliveries were marked successful, never sent.
 */
async function removedMidFlight(databaseUrl: string, store: Store): Promise<void> {
  const hold = gate();
  cleanups.push(hold.open);
  const old = startFakeEndpoint(async () => {
    await hold.promise;
    return new Response("ok");
  });
  const fresh = startFakeEndpoint();
  cleanups.push(() => old.stop());
  cleanups.push(() => fresh.stop());
  const removed = await store.webhooks.create({ name: "old", url: `${old.url}/in` });
  await store.queue.enqueueMany(Array.from({ length: IN_FLIGHT }, (_, i) => itemChange(i + 1)));
  const worker = spawnWorker(databaseUrl, {
    env: { WEBHOOK_CONCURRENCY: String(IN_FLIGHT) },
    cleanups,
  });
  await old.waitForRequests(IN_FLIGHT);

  await store.webhooks.remove(removed.id);
  const other = await store.webhooks.create({ name: "new", url: `${fresh.url}/in` });
  await store.queue.enqueueMany(Array.from({ length: NEW_CHANGES }, (_, i) => itemChange(100 + i)));
  // The worker holds new claims (every slot is busy with the old requests) before they end.
  await until(async () => (await store.queue.stats()).delivering >= IN_FLIGHT);
  hold.open();
  await until(async () => {
    const stats = await store.queue.stats();
    return stats.queued === 0 && stats.delivering === 0;
  });

  const successful = await store.queue.list({ webhookId: other.id, state: "successful" });
  const received = new Set(fresh.requests.map((request) => request.headers["webhook-id"]));
  expect(successful.map((d) => d.messageId).filter((id) => !received.has(id))).toEqual([]);
  expect(successful).toHaveLength(NEW_CHANGES);
  expect(fresh.requests).toHaveLength(NEW_CHANGES);
  // And no late result of the removed webhook was recorded on a new delivery.
  for (const delivery of successful) {
    const found = await store.queue.get(delivery.id);
    expect(found?.attempts.map((attempt) => attempt.url)).toEqual([`${fresh.url}/in`]);
  }
  worker.kill("SIGTERM");
  expect(await worker.exited).toBe(0);
}

describe("a webhook removed mid-flight, new changes queued at once (SQLite)", () => {
  const dir = tempDirs("removed-mid-flight-");

  test("every delivery marked successful was received by the endpoint, with only its own attempt recorded", async () => {
    const path = join(dir(), "app.db");
    const store = openSqliteStore(path);
    cleanups.push(() => store.close());
    await removedMidFlight(path, store);
  });
});

describePostgres("a webhook removed mid-flight, new changes queued at once (PostgreSQL)", () => {
  const pg = usePostgresCluster();

  test("every delivery marked successful was received by the endpoint, with only its own attempt recorded", async () => {
    const url = await pg.cluster.createDatabase();
    const store = await openPostgresStore(url);
    cleanups.push(() => store.close());
    await removedMidFlight(url, store);
  });
});
