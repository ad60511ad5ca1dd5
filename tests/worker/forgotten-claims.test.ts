import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createMemoryLogger } from "../../lib/log.ts";
import { openPostgresStore } from "../../lib/store/postgres/store.ts";
import { openSqliteStore } from "../../lib/store/sqlite/store.ts";
import type { Store } from "../../lib/webhooks/ports.ts";
import { createDeliveryWorker } from "../../lib/worker/bind.ts";
import { change } from "../fakes/change.ts";
import { describePostgres, usePostgresCluster } from "../fakes/postgres-cluster.ts";
import { tempDirs } from "../fakes/temp-dirs.ts";
import { loopbackWorkerConfig } from "../fakes/test-worker.ts";
import { startFakeEndpoint } from "../fakes/webhook-endpoint.ts";

// Real time: retries a second apart, after-attempt writes slowed past them.
setDefaultTimeout(60_000);

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Longer than the retry delay: each failure's streak is written after its retry is due. */
const SLOW_WRITE_MS = 1500;

/**
 * `store` with its failure-streak writes slowed (a database busy with other writers, say): the
 * worker holds each failed delivery, its result written, while its retry comes due.
 */
function withSlowStreaks(store: Store): Store {
  const { health } = store;
  return {
    ...store,
    health: {
      ...health,
      async recordFailure(...args) {
        await new Promise((resolve) => setTimeout(resolve, SLOW_WRITE_MS));
        return health.recordFailure(...args);
      },
    },
  };
}

/**
 * A receiver that always fails, a schedule of retries a second apart (3 attempts), after-attempt
 * writes slower than a retry, two slots: each retry is due while the worker still holds the
 * attempt before it. It is claimed only once handled, never while held.
 */
async function failingOnAOneSecondSchedule(store: Store): Promise<void> {
  const endpoint = startFakeEndpoint(() => new Response("down", { status: 500 }));
  cleanups.push(() => endpoint.stop());
  await store.webhooks.create({
    name: "down",
    url: `${endpoint.url}/in`,
    retrySchedule: [1000, 1000],
  });
  const [id] = await store.queue.enqueue(change());
  const logger = createMemoryLogger();
  const worker = createDeliveryWorker({
    store: withSlowStreaks(store),
    logger,
    config: loopbackWorkerConfig({ concurrency: 2, leaseMs: 6000, maxAttempts: null }),
  });
  const stop = new AbortController();
  const running = worker.run({ signal: stop.signal });
  const deadline = performance.now() + 30_000;
  while (performance.now() < deadline) {
    if ((await store.queue.get(id ?? 0))?.delivery.state === "failed") break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  stop.abort();
  await running;
  const shown = await store.queue.get(id ?? 0);
  expect(logger.lines.filter((line) => line.includes("already"))).toEqual([]);
  expect(shown?.attempts.map((a) => a.outcome)).toEqual(["http_error", "http_error", "http_error"]);
  expect(shown?.delivery.state).toBe("failed");
  expect(endpoint.requests).toHaveLength(3);
}

describe("a worker's claims while after-attempt writes are slow, SQLite", () => {
  const dir = tempDirs("forgotten-");
  test("a failing receiver on a 1 s schedule: no claim of a delivery still held, no lease_expired", async () => {
    const store = openSqliteStore(`${dir()}/app.db`);
    cleanups.push(() => store.close());
    await failingOnAOneSecondSchedule(store);
  });
});

describePostgres("a worker's claims while after-attempt writes are slow, PostgreSQL", () => {
  const pg = usePostgresCluster();
  test("a failing receiver on a 1 s schedule: no claim of a delivery still held, no lease_expired", async () => {
    const store = await openPostgresStore(await pg.cluster.createDatabase());
    cleanups.push(() => store.close());
    await failingOnAOneSecondSchedule(store);
  });
});
