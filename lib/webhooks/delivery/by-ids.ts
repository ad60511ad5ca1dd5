import type { DeliveryQueue, IdState } from "../ports.ts";
import { type BulkPace, DEFAULT_PACE } from "./replay.ts";

/**
 * Retry and replay of deliveries named by id (the API's `ids`, the CLI's ids), answering for
 * each id not acted on why: unknown, not failed (a retry of a successful one), already queued,
 * in flight, or its template failed (a replay has no body to send; a retry renders it again).
 */

export type NotActedOn =
  | "unknown"
  | "not failed"
  | "already queued"
  | "in flight"
  | "template failed";

export interface ByIds {
  /** Deliveries queued again. */
  count: number;
  /** Ids given (each once). */
  matched: number;
  /** The ids not acted on, in the order given, each with why. */
  skipped: Array<{ id: number; reason: NotActedOn }>;
}

/** Why `kind` leaves a delivery as it is at `now`, or null when it takes it. */
export function whyNot(
  kind: "retry" | "replay",
  found: IdState | undefined,
  now: number,
): NotActedOn | null {
  if (found === undefined) return "unknown";
  if (found.state === "delivering") return "in flight";
  if (kind === "retry") {
    if (found.state === "failed") return null;
    if (found.state === "successful") return "not failed";
    // Queued after an attempt, due later: waiting for an automatic retry, made due now.
    return found.attempts > 0 && found.nextAttemptAt > now ? null : "already queued";
  }
  if (found.state === "queued") return "already queued";
  return found.templateFailed ? "template failed" : null;
}

/** Retries the deliveries `ids` names, a chunk at a time, saying why of each one left. */
export function retryByIds(
  queue: DeliveryQueue,
  ids: readonly number[],
  now: number,
  pace: BulkPace = DEFAULT_PACE,
): Promise<ByIds> {
  return byIds(queue, "retry", ids, { now, pace });
}

/**
 * Replays the deliveries `ids` names: each sends the same message (body, webhook-id) again as
 * its next attempt; a chunk at a time, saying why of each one left.
 */
export function replayByIds(
  queue: DeliveryQueue,
  ids: readonly number[],
  now: number,
  pace: BulkPace = DEFAULT_PACE,
): Promise<ByIds> {
  return byIds(queue, "replay", ids, { now, pace });
}

async function byIds(
  queue: DeliveryQueue,
  kind: "retry" | "replay",
  given: readonly number[],
  options: { now: number; pace: BulkPace },
): Promise<ByIds> {
  const { now, pace } = options;
  const ids = [...new Set(given)];
  // Oldest first, whatever the order given: an ordered webhook's changes of one object are
  // sent in commit order only if an older one is queued before a newer one can go out (a
  // worker may send what one chunk queued before the next chunk is written).
  const oldestFirst = [...ids].sort((a, b) => a - b);
  let count = 0;
  const reasons = new Map<number, NotActedOn>();
  for (let at = 0; at < oldestFirst.length; at += pace.chunkSize) {
    if (at > 0) await pace.pause();
    const chunk = oldestFirst.slice(at, at + pace.chunkSize);
    const states = new Map((await queue.idStates(chunk)).map((found) => [found.id, found]));
    const taken: number[] = [];
    for (const id of chunk) {
      const reason = whyNot(kind, states.get(id), now);
      if (reason === null) taken.push(id);
      else reasons.set(id, reason);
    }
    if (taken.length > 0) {
      count += await (kind === "retry" ? queue.retry(taken, now) : queue.replay(taken, now));
    }
  }
  const skipped = ids.flatMap((id) => {
    const reason = reasons.get(id);
    return reason === undefined ? [] : [{ id, reason }];
  });
  return { count, matched: ids.length, skipped };
}

/** One line: "Replayed 1 of 3 deliveries; not replayed: 5 (in flight), 9 (unknown)". */
export function byIdsSentence(done: ByIds, verb: "Retried" | "Replayed"): string {
  const line = `${verb} ${done.count} of ${done.matched} ${done.matched === 1 ? "delivery" : "deliveries"}`;
  if (done.skipped.length === 0) return line;
  const shown = done.skipped.slice(0, 20).map(({ id, reason }) => `${id} (${reason})`);
  const more = done.skipped.length > 20 ? `, and ${done.skipped.length - 20} more` : "";
  return `${line}; not ${verb.toLowerCase()}: ${shown.join(", ")}${more}`;
}
