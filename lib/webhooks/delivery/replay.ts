import type { DeliverySearch, DeliveryState } from "../model.ts";
import type { DeliveryQueue } from "../ports.ts";

/** The most deliveries one retry or replay queues; the rest wait for another call. */
export const MAX_REPLAY = 100_000;

/** Replay's default states: every delivery that ended, successful ones included. */
export const REPLAYABLE_STATES: readonly DeliveryState[] = ["successful", "failed"];

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
): Promise<Requeued> {
  const states = (filter.states ?? REPLAYABLE_STATES).filter((s) => REPLAYABLE_STATES.includes(s));
  return requeue(queue, { ...filter, states }, (ids) => queue.replay(ids, now));
}

/** Retries the failed deliveries `filter` matches, oldest first, at most MAX_REPLAY. */
export function retryMatching(
  queue: DeliveryQueue,
  filter: DeliverySearch,
  now: number,
): Promise<Requeued> {
  return requeue(queue, { ...filter, states: ["failed"] }, (ids) => queue.retry(ids, now));
}

async function requeue(
  queue: DeliveryQueue,
  filter: DeliverySearch,
  write: (ids: number[]) => Promise<number>,
): Promise<Requeued> {
  const ids = await queue.matchingIds(filter, MAX_REPLAY + 1);
  const cut = ids.length > MAX_REPLAY;
  const taken = cut ? ids.slice(0, MAX_REPLAY) : ids;
  const count = taken.length === 0 ? 0 : await write(taken);
  const firstLeft = cut ? await queue.get(ids[MAX_REPLAY] ?? 0) : null;
  return {
    count,
    matched: taken.length,
    cut,
    nextSince: firstLeft?.delivery.createdAt ?? null,
  };
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
