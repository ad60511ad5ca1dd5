import { afterEach, describe, expect, test } from "bun:test";
import { parseAllowList } from "../../lib/http/ssrf.ts";
import { createMemoryLogger } from "../../lib/log.ts";
import type { Store } from "../../lib/webhooks/ports.ts";
import { createDeliveryWorker } from "../../lib/worker/bind.ts";
import { loggingHooks } from "../../lib/worker/log-hooks.ts";
import { change } from "../fakes/change.ts";
import { openSqliteDb } from "../fakes/sqlite-db.ts";
import { type FakeEndpoint, hangFirst, startFakeEndpoint } from "../fakes/webhook-endpoint.ts";

const T0 = Date.UTC(2030, 0, 1);
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A real SQLite store whose result writes fail with a full disk for the next `failures` tries. */
function setup(respond?: Parameters<typeof startFakeEndpoint>[0]) {
  const clock = { t: T0, now: () => clock.t };
  const { store } = openSqliteDb({ now: clock.now });
  const endpoint: FakeEndpoint = startFakeEndpoint(respond);
  cleanups.push(() => store.close());
  cleanups.push(() => endpoint.stop());
  const disk = { failures: 0, requestsSeenWhileFailing: [] as number[] };
  const diskFull: Store = {
    ...store,
    queue: {
      ...store.queue,
      finishMany(items) {
        if (disk.failures > 0) {
          disk.failures--;
          disk.requestsSeenWhileFailing.push(endpoint.requests.length);
          return Promise.reject(new Error("database or disk is full"));
        }
        return store.queue.finishMany(items);
      },
    },
  };
  const logger = createMemoryLogger();
  const worker = (concurrency = 1) =>
    createDeliveryWorker({
      store: diskFull,
      now: clock.now,
      random: () => 0.5,
      logger,
      config: {
        timeoutMs: 5000,
        maxAttempts: 5,
        allowList: parseAllowList("127.0.0.1"),
        leaseMs: 30_000,
        concurrency,
        prefetch: 4,
        retryBaseMs: 10_000,
        retryMaxMs: 3_600_000,
      },
    });
  return { store, endpoint, disk, logger, worker };
}

describe("the worker's log lines about the store", () => {
  test("a result write failing again and again is logged once, then once with a count when it succeeds; no new request starts meanwhile", async () => {
    const env = setup();
    await env.store.webhooks.create({ name: "hook", url: `${env.endpoint.url}/in` });
    for (let n = 0; n < 5; n++) await env.store.queue.enqueue(change());
    env.disk.failures = 3;
    const worker = env.worker();
    await worker.runOnce();

    expect(env.endpoint.requests).toHaveLength(5);
    expect(await env.store.queue.stats()).toMatchObject({ successful: 5, delivering: 0 });
    // The results could not be written three times. Slots went on to the next claims while the
    // first result waited for its group commit, before the write failed; once it had failed,
    // only the one request already in flight (concurrency 1) ended until the write succeeded.
    const seen = env.disk.requestsSeenWhileFailing;
    expect(seen).toHaveLength(3);
    expect(Math.max(...seen) - Math.min(...seen)).toBeLessThanOrEqual(1);
    const storeLines = env.logger.lines.filter((line) => !line.startsWith("info Released"));
    expect(storeLines).toHaveLength(2);
    expect(storeLines[0]).toBe(`error Worker finish failed (delivery 1): database or disk is full`);
    // Counted per result: a failed group commit fails each of its results.
    const more = storeLines[1]?.match(
      /^info Result writes succeed again: (\d+) more failed in \d+\.\d s after the one logged$/,
    );
    expect(Number(more?.[1])).toBeGreaterThanOrEqual(2);
  });

  test("a worker error that quotes a URL is logged with its password masked", () => {
    const logger = createMemoryLogger();
    const hooks = loggingHooks(logger, { maxAttempts: 5 });
    const error = new Error("could not connect to postgres://app:db-pass@db.internal:5432/app");
    hooks.onError?.(error, { phase: "claim" });
    expect(logger.lines).toEqual([
      "error Worker claim failed: could not connect to postgres://app:***@db.internal:5432/app",
    ]);
  });

  test("queue calls and result writes have a run of failures each: a claim that works ends neither the other's run nor its count", () => {
    const logger = createMemoryLogger();
    const clock = { t: T0 };
    const hooks = loggingHooks(logger, { maxAttempts: 5 }, { now: () => clock.t });
    const full = new Error("database or disk is full");
    hooks.onError?.(full, { phase: "finish" });
    hooks.onError?.(full, { phase: "claim" });
    hooks.onStoreBack?.("queue");
    hooks.onError?.(full, { phase: "finish" });
    hooks.onError?.(full, { phase: "finish" });
    clock.t += 2500;
    hooks.onStoreBack?.("results");
    hooks.onStoreBack?.("results");
    expect(logger.lines).toEqual([
      "error Worker finish failed: database or disk is full",
      "error Worker claim failed: database or disk is full",
      "info Result writes succeed again: 2 more failed in 2.5 s after the one logged",
    ]);
  });

  test("a result discarded because its webhook was removed meanwhile says so", async () => {
    const first = hangFirst();
    const env = setup(first.respond);
    cleanups.push(first.release);
    const webhook = await env.store.webhooks.create({
      name: "gone",
      url: `${env.endpoint.url}/in`,
    });
    await env.store.queue.enqueue(change());
    const worker = env.worker();
    const run = worker.runOnce();
    await env.endpoint.waitForRequests(1);
    await env.store.webhooks.remove(webhook.id);
    first.release();
    await run;
    expect(worker.counts.discarded).toBe(1);
    // Named once the webhook was looked up.
    for (let turn = 0; turn < 20 && env.logger.lines.length === 0; turn++) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(env.logger.lines).toEqual([
      'warn Delivery 1 (item.created) to "gone", attempt 1: result discarded, the webhook was removed meanwhile',
    ]);
  });
});
