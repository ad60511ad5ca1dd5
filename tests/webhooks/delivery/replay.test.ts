import type { Database } from "bun:sqlite";
import { afterEach, describe, expect, test } from "bun:test";
import {
  type BulkPace,
  nextChunkSize,
  replayDeliveries,
  retryAllFailed,
  retryIds,
  retryMatching,
} from "../../../lib/webhooks/delivery/replay.ts";
import type { DeliveryQueue, Store } from "../../../lib/webhooks/ports.ts";
import { insertDeliveries, openSqliteDb } from "../../fakes/sqlite-db.ts";

const T0 = Date.UTC(2030, 0, 1);
const LATER = T0 + 3_600_000;

const opened: Store[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

/** A store with `count` deliveries of webhook 1 in `state`, one a millisecond from T0. */
function seeded(count: number, state: "failed" | "successful") {
  const { db, store } = openSqliteDb({ now: () => LATER });
  opened.push(store);
  insertDeliveries(db, { count, state, from: T0 });
  return { db, store };
}

/** The queue, each write's ids recorded (one entry per chunk written). */
function recorded(queue: DeliveryQueue) {
  const chunks: number[][] = [];
  const wrapped: DeliveryQueue = {
    ...queue,
    retry: (ids, now) => {
      chunks.push([...ids]);
      return queue.retry(ids, now);
    },
    replay: (ids, now) => {
      chunks.push([...ids]);
      return queue.replay(ids, now);
    },
  };
  return { queue: wrapped, chunks };
}

function states(db: Database): Record<string, number> {
  const rows = db
    .query<{ state: string; n: number }, []>(
      "SELECT state, count(*) AS n FROM deliveries GROUP BY state",
    )
    .all();
  return Object.fromEntries(rows.map((row) => [row.state, row.n]));
}

/** Chunks of `size`, the pause counted. */
function smallChunks(size: number, onPause: () => void = () => {}): BulkPace {
  return {
    chunkSize: size,
    pause: async () => onPause(),
  };
}

describe("retry and replay by filter, in chunks", () => {
  test("retryMatching() requeues every failed delivery once, a chunk per write, a pause between writes", async () => {
    const { db, store } = seeded(103, "failed");
    const { queue, chunks } = recorded(store.queue);
    let pauses = 0;
    const done = await retryMatching(
      queue,
      { webhookId: 1 },
      LATER,
      smallChunks(10, () => pauses++),
    );
    expect(done).toEqual({ count: 103, matched: 103, cut: false, nextSince: null });
    expect(chunks).toHaveLength(11);
    expect(chunks.every((chunk) => chunk.length <= 10)).toBe(true);
    const written = chunks.flat();
    expect(new Set(written).size).toBe(103);
    expect(written).toEqual([...written].sort((a, b) => a - b));
    expect(pauses).toBe(10);
    expect(states(db)).toEqual({ queued: 103 });
  });

  test("a delivery that fails again while the retry goes on is not retried a second time", async () => {
    const { db, store } = seeded(50, "failed");
    const { queue, chunks } = recorded(store.queue);
    // Between chunks a worker sends what was requeued, and it fails again at once.
    const failAgain = () => db.run("UPDATE deliveries SET state = 'failed' WHERE state = 'queued'");
    const done = await retryMatching(queue, {}, LATER, smallChunks(7, failAgain));
    const written = chunks.flat();
    expect(written).toHaveLength(50);
    expect(new Set(written).size).toBe(50);
    expect(done.count).toBe(50);
  });

  test("replayDeliveries() replays each ended delivery once, in chunks, none lost", async () => {
    const { db, store } = seeded(64, "successful");
    const { queue, chunks } = recorded(store.queue);
    const done = await replayDeliveries(queue, { webhookId: 1 }, LATER, smallChunks(8));
    expect(done).toMatchObject({ count: 64, matched: 64, cut: false });
    // 64 in 8 full chunks, then one read that finds no more.
    expect(chunks.map((chunk) => chunk.length)).toEqual([8, 8, 8, 8, 8, 8, 8, 8]);
    expect(new Set(chunks.flat()).size).toBe(64);
    expect(states(db)).toEqual({ queued: 64 });
  });

  test("retryAllFailed() has no cap and retryIds() writes the ids given a chunk at a time", async () => {
    const { db, store } = seeded(30, "failed");
    const { queue, chunks } = recorded(store.queue);
    expect(await retryIds(queue, [1, 2, 3, 4, 5], LATER, smallChunks(2))).toBe(5);
    expect(chunks).toEqual([[1, 2], [3, 4], [5]]);
    chunks.length = 0;
    // The five just queued count as failing too (queued after an attempt that was not 2XX, as
    // the Failed lists show them): taken once each, already due, so left as they are.
    expect(await retryAllFailed(queue, LATER, smallChunks(4))).toBe(25);
    expect(chunks.flat()).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(states(db)).toEqual({ queued: 30 });
  });
});

describe("chunks that follow the machine", () => {
  const pace: BulkPace = { chunkSize: 1000, targetMs: 20, pause: async () => {} };

  test("retryIds() writes each id given once while its chunks shrink and grow", async () => {
    const { store } = seeded(12, "failed");
    const { queue, chunks } = recorded(store.queue);
    // The first chunk takes 100 ms (past the target: the next is halved), the rest no time
    // (under a quarter of it: each next one doubled).
    let reads = 0;
    const now = () => (reads++ === 0 ? 0 : 100);
    const ids = Array.from({ length: 12 }, (_, i) => i + 1);
    const changing: BulkPace = { chunkSize: 4, targetMs: 20, now, pause: async () => {} };
    expect(await retryIds(queue, ids, LATER, changing)).toBe(12);
    expect(chunks.map((chunk) => chunk.length)).toEqual([4, 2, 4, 2]);
    expect(chunks.flat()).toEqual(ids);
  });

  test("nextChunkSize() halves past the target, doubles under a quarter of it, within bounds", () => {
    expect(nextChunkSize(1000, 21, pace)).toBe(500);
    expect(nextChunkSize(100, 200, pace)).toBe(50);
    expect(nextChunkSize(50, 200, pace)).toBe(50);
    expect(nextChunkSize(500, 10, pace)).toBe(500);
    expect(nextChunkSize(500, 4, pace)).toBe(1000);
    expect(nextChunkSize(1000, 1, pace)).toBe(1000);
    expect(nextChunkSize(7, 500, { chunkSize: 10, pause: pace.pause })).toBe(10);
  });

  test("a retry writes smaller chunks while they are slow and larger again once they are quick, each delivery once", async () => {
    const { db, store } = seeded(40, "failed");
    const { queue, chunks } = recorded(store.queue);
    let t = 0;
    // The first three writes take 30 ms each (a busy machine), the rest 1 ms.
    const slow: DeliveryQueue = {
      ...queue,
      retry: (ids, now) => {
        t += chunks.length < 3 ? 30 : 1;
        return queue.retry(ids, now);
      },
    };
    const adaptive: BulkPace = { chunkSize: 16, targetMs: 20, now: () => t, pause: async () => {} };
    expect((await retryMatching(slow, {}, LATER, adaptive)).count).toBe(40);
    expect(chunks.map((chunk) => chunk.length)).toEqual([16, 8, 4, 2, 4, 6]);
    expect(new Set(chunks.flat()).size).toBe(40);
    expect(states(db)).toEqual({ queued: 40 });
  });
});
