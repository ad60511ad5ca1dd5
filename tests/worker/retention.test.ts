import type { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { createMemoryLogger } from "../../lib/log.ts";
import { purgeBatch } from "../../lib/store/sqlite/queue/maintenance.ts";
import { createRetention } from "../../lib/worker/retention.ts";
import { itemChange } from "../fakes/change.ts";
import { attemptRecord, completeClaim } from "../fakes/delivery.ts";
import { createFakeClock } from "../fakes/fake-clock.ts";
import { useSqliteDbs } from "../fakes/sqlite-db.ts";

const DAY = 86_400_000;
const HOUR = 3_600_000;
const T0 = Date.UTC(2025, 0, 1);

const openDb = useSqliteDbs();

/** 25 deliveries finished at T0, 5 finished 20 days later, 2 still queued; one attempt each. */
async function history() {
  const clock = createFakeClock(T0);
  const { db, store } = openDb({ now: clock.now });
  await store.webhooks.create({ name: "a", url: "https://example.com/a" });
  for (let n = 0; n < 30; n++) await store.queue.enqueue(itemChange(n));
  const claims = await store.queue.claim({
    workerId: "w1",
    limit: 30,
    leaseMs: 40 * DAY,
    now: clock.now(),
  });
  for (const claim of claims.slice(0, 25)) {
    await completeClaim(store, claim, attemptRecord(claim.delivery.id % 2 ? 200 : 500));
  }
  clock.advance(20 * DAY);
  for (const claim of claims.slice(25)) await completeClaim(store, claim, attemptRecord(200));
  await store.queue.enqueue(itemChange(98));
  await store.queue.enqueue(itemChange(99));
  clock.advance(11 * DAY);
  return { clock, db, store };
}

function counts(db: Database) {
  return db
    .query<{ deliveries: number; attempts: number; queued: number }, []>(
      `SELECT (SELECT count(*) FROM deliveries) AS deliveries,
              (SELECT count(*) FROM attempts) AS attempts,
              (SELECT count(*) FROM deliveries WHERE state = 'queued') AS queued`,
    )
    .get();
}

describe("createRetention()", () => {
  test("purges terminal deliveries and their attempts older than the retention, in batches with a pause between", async () => {
    const { clock, db } = await history();
    expect(counts(db)).toEqual({ deliveries: 32, attempts: 30, queued: 2 });
    const events: string[] = [];
    const logger = createMemoryLogger();
    const retention = createRetention({
      purge: async (olderThan, { batchSize }) => {
        const deleted = purgeBatch(db, olderThan, batchSize);
        events.push(`purge ${deleted}`);
        return deleted;
      },
      retentionDays: 30,
      now: clock.now,
      batchSize: 10,
      pause: async () => {
        events.push("pause");
      },
      logger,
    });
    expect(await retention.maybeRun()).toBe(25);
    expect(events).toEqual(["purge 10", "pause", "purge 10", "pause", "purge 5"]);
    expect(counts(db)).toEqual({ deliveries: 7, attempts: 5, queued: 2 });
    expect(logger.lines).toEqual(["info Purged 25 deliveries completed more than 30 days ago"]);
  });

  test("runs at most once an hour", async () => {
    const clock = createFakeClock(T0);
    const calls: number[] = [];
    const retention = createRetention({
      purge: async (olderThan) => {
        calls.push(olderThan);
        return 0;
      },
      retentionDays: 30,
      now: clock.now,
    });
    expect(await retention.maybeRun()).toBe(0);
    clock.advance(HOUR - 1);
    expect(await retention.maybeRun()).toBeNull();
    clock.advance(1);
    expect(await retention.maybeRun()).toBe(0);
    expect(calls).toEqual([T0 - 30 * DAY, T0 + HOUR - 30 * DAY]);
  });

  test("does not start a second purge while one runs, and idle() waits for it", async () => {
    const clock = createFakeClock(T0);
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let calls = 0;
    const retention = createRetention({
      purge: async () => {
        calls++;
        await gate;
        return 3;
      },
      retentionDays: 30,
      now: clock.now,
      minIntervalMs: 0,
    });
    const running = retention.maybeRun();
    expect(await retention.maybeRun()).toBeNull();
    let idle = false;
    const idled = retention.idle().then(() => {
      idle = true;
    });
    await Promise.resolve();
    expect(idle).toBe(false);
    release();
    expect(await running).toBe(3);
    await idled;
    expect(calls).toBe(1);
  });

  test("keeps everything when WEBHOOK_RETENTION_DAYS is 0", async () => {
    let calls = 0;
    const retention = createRetention({
      purge: async () => {
        calls++;
        return 0;
      },
      retentionDays: 0,
    });
    expect(await retention.maybeRun()).toBeNull();
    expect(calls).toBe(0);
  });

  test("logs a failed purge, resolves null, and tries again after the interval", async () => {
    const clock = createFakeClock(T0);
    const logger = createMemoryLogger();
    let fail = true;
    const retention = createRetention({
      purge: async () => {
        if (fail) throw new Error("database is locked");
        return 0;
      },
      retentionDays: 30,
      now: clock.now,
      logger,
    });
    expect(await retention.maybeRun()).toBeNull();
    expect(logger.lines).toEqual([
      "warn Purging old deliveries failed (0 deleted): database is locked",
    ]);
    fail = false;
    expect(await retention.maybeRun()).toBeNull();
    clock.advance(HOUR);
    expect(await retention.maybeRun()).toBe(0);
  });

  test("stops between batches when its signal aborts", async () => {
    const controller = new AbortController();
    let calls = 0;
    const retention = createRetention({
      purge: async (_olderThan, { batchSize }) => {
        calls++;
        return batchSize;
      },
      retentionDays: 30,
      batchSize: 100,
      pause: async () => {
        if (calls === 3) controller.abort();
      },
      signal: controller.signal,
    });
    expect(await retention.maybeRun()).toBe(300);
    expect(calls).toBe(3);
    expect(await retention.maybeRun()).toBeNull();
  });

  test("yields to the event loop between batches by default", async () => {
    const order: string[] = [];
    let batches = 2;
    const retention = createRetention({
      purge: async () => {
        order.push("batch");
        return batches-- > 0 ? 10 : 0;
      },
      retentionDays: 30,
      batchSize: 10,
    });
    setImmediate(() => order.push("other work"));
    await retention.maybeRun();
    expect(order).toEqual(["batch", "other work", "batch", "batch"]);
  });
});
