import type { DeliverySearch, DeliveryState } from "../model.ts";
import type { DeliveryQueue } from "../ports.ts";

/** The most deliveries one retry or replay by filter queues; the rest wait for another call. */
export const MAX_REPLAY = 100_000;

/** Replay's default states: every delivery that ended, successful ones included. */
export const REPLAYABLE_STATES: readonly DeliveryState[] = ["successful", "failed"];

/**
 * How bulk work goes: at most `chunkSize` deliveries per write, each write its own short
 * transaction, and `pause` between writes, so other requests are answered and workers write in
 * between.
 */
export interface BulkPace {
  chunkSize: number;
  pause(): Promise<void>;
  /**
   * When set, chunks follow the machine (nextChunkSize): one that took longer than this, its
   * read and its write, halves the next; one that took under a quarter of it doubles the next.
   */
  targetMs?: number;
  /** The clock `targetMs` is measured by, in ms (default: performance.now). */
  now?: () => number;
}

/**
 * Up to 1,000 rows per write: one set-based UPDATE of a chunk takes a few ms on SQLite; on a
 * loaded machine chunks shrink to keep each under 20 ms. A macrotask between chunks lets the
 * server read the requests waiting meanwhile.
 */
export const DEFAULT_PACE: BulkPace = {
  chunkSize: 1000,
  targetMs: 20,
  pause: () => new Promise((resolve) => setImmediate(resolve)),
};

/**
 * The next chunk's size after one of `size` took `tookMs`: halved past the target, down to a
 * twentieth of the largest (50 of 1,000); doubled under a quarter of it, up to the largest.
 */
export function nextChunkSize(size: number, tookMs: number, pace: BulkPace): number {
  const { chunkSize, targetMs } = pace;
  if (targetMs === undefined) return chunkSize;
  if (tookMs > targetMs) return Math.max(Math.ceil(chunkSize / 20), Math.floor(size / 2));
  if (tookMs < targetMs / 4) return Math.min(chunkSize, size * 2);
  return size;
}

export interface Requeued {
  /** Deliveries queued again. */
  count: number;
  /** Deliveries the filter matched, at most MAX_REPLAY (some may have been skipped: see count). */
  matched: number;
  /** More matched than MAX_REPLAY: only the oldest MAX_REPLAY were taken. */
  cut: boolean;
  /** When cut: the time (epoch ms) of the first left out, the `since` of the next call. */
  nextSince: number | null;
}

/**
 * Replays the deliveries `filter` matches (default: successful and failed), oldest first, at
 * most MAX_REPLAY: each sends the same message again as its next attempt (queue.replay).
 */
export function replayDeliveries(
  queue: DeliveryQueue,
  filter: DeliverySearch,
  now: number,
  pace: BulkPace = DEFAULT_PACE,
): Promise<Requeued> {
  const states = (filter.states ?? REPLAYABLE_STATES).filter((s) => REPLAYABLE_STATES.includes(s));
  const write = (ids: number[]) => queue.replay(ids, now);
  return requeue(queue, { ...filter, states }, write, { pace, cap: MAX_REPLAY });
}

/** Retries the failed deliveries `filter` matches, oldest first, at most MAX_REPLAY. */
export function retryMatching(
  queue: DeliveryQueue,
  filter: DeliverySearch,
  now: number,
  pace: BulkPace = DEFAULT_PACE,
): Promise<Requeued> {
  const write = (ids: number[]) => queue.retry(ids, now);
  return requeue(queue, { ...filter, states: ["failed"] }, write, { pace, cap: MAX_REPLAY });
}

/**
 * Retries every failed delivery and every one waiting for an automatic retry, which is sent now
 * (the admin's "Retry all failed", the CLI's --all-failed: what their Failed lists show).
 */
export async function retryAllFailed(
  queue: DeliveryQueue,
  now: number,
  pace: BulkPace = DEFAULT_PACE,
): Promise<number> {
  const write = (ids: number[]) => queue.retry(ids, now);
  const done = await requeue(queue, { failing: true }, write, { pace, cap: Infinity });
  return done.count;
}

/** Retries the deliveries `ids` names (queue.retry), a chunk at a time. */
export async function retryIds(
  queue: DeliveryQueue,
  ids: readonly number[],
  now: number,
  pace: BulkPace = DEFAULT_PACE,
): Promise<number> {
  const clock = pace.now ?? (() => performance.now());
  let count = 0;
  let size = pace.chunkSize;
  // The next chunk starts after this one, whatever size comes next.
  for (let at = 0; at < ids.length; ) {
    if (at > 0) await pace.pause();
    const started = clock();
    const chunk = ids.slice(at, at + size);
    count += await queue.retry(chunk, now);
    at += chunk.length;
    size = nextChunkSize(chunk.length, clock() - started, pace);
  }
  return count;
}

/**
 * The matching deliveries, oldest first, a page of ids after the last one taken at a time: each
 * page is written in its own transaction before the next is read, so a delivery requeued and
 * sent again meanwhile is never taken twice, and at most `cap` are taken.
 */
async function requeue(
  queue: DeliveryQueue,
  filter: DeliverySearch,
  write: (ids: number[]) => Promise<number>,
  options: { pace: BulkPace; cap: number },
): Promise<Requeued> {
  const { pace, cap } = options;
  const clock = pace.now ?? (() => performance.now());
  let count = 0;
  let matched = 0;
  let after = 0;
  let size = pace.chunkSize;
  for (;;) {
    const room = cap - matched;
    // At the cap's last page, one id more says whether more matched.
    const asked = Math.min(size, room + 1);
    const started = clock();
    const ids = await queue.matchingIds(filter, asked, after);
    const taken = ids.length > room ? ids.slice(0, room) : ids;
    if (taken.length > 0) {
      count += await write(taken);
      matched += taken.length;
      after = taken[taken.length - 1] ?? after;
    }
    if (ids.length > room) {
      const firstLeft = await queue.get(ids[room] ?? 0);
      return { count, matched, cut: true, nextSince: firstLeft?.delivery.createdAt ?? null };
    }
    if (ids.length < asked) return { count, matched, cut: false, nextSince: null };
    size = nextChunkSize(size, clock() - started, pace);
    await pace.pause();
  }
}

/** One line saying what a retry or replay did, and when cut, how to go on. */
export function requeuedSentence(done: Requeued, verb: "Retried" | "Replayed"): string {
  const line = `${verb} ${done.count} of ${done.matched} matching ${done.matched === 1 ? "delivery" : "deliveries"}`;
  if (!done.cut) return line;
  const next =
    done.nextSince === null
      ? ""
      : `; for the rest, again with since ${new Date(done.nextSince).toISOString()}`;
  return `${line}: cut at ${MAX_REPLAY.toLocaleString("en")}, the oldest first${next}`;
}
