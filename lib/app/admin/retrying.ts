import type { Delivery, Webhook } from "../../webhooks/model.ts";
import { attemptLimit } from "../../webhooks/policy/retry-schedule.ts";

/**
 * A delivery waiting for an automatic retry: queued again after an attempt whose answer was not
 * 2XX. Its state stays `queued` (the claim and the guarantees know no other); the admin lists it
 * under Failed, says when it is retried, and its Retry button makes it due now.
 */
export function isRetrying(d: Pick<Delivery, "state" | "attempts" | "lastStatus">): boolean {
  const ok = d.lastStatus !== null && d.lastStatus >= 200 && d.lastStatus <= 299;
  return d.state === "queued" && d.attempts > 0 && !ok;
}

/** Attempts each webhook's deliveries get: its schedule's, cut by WEBHOOK_MAX_ATTEMPTS. */
export function attemptLimits(
  webhooks: readonly Pick<Webhook, "id" | "retrySchedule">[],
  maxAttempts: number | null,
): Map<number, number> {
  return new Map(webhooks.map((w) => [w.id, attemptLimit(w.retrySchedule, maxAttempts)]));
}

/**
 * `retrying automatically at 14:05 UTC (attempt 3 of 8)`: the time alone when it is today (UTC),
 * with the date otherwise; "of N" left out when the webhook's limit is not known.
 */
export function retryingText(
  d: Pick<Delivery, "attempts" | "nextAttemptAt">,
  limit: number | undefined,
  nowMs: number,
): string {
  const at = new Date(d.nextAttemptAt).toISOString();
  const sameDay = at.slice(0, 10) === new Date(nowMs).toISOString().slice(0, 10);
  const when = `${sameDay ? "" : `${at.slice(0, 10)} `}${at.slice(11, 16)} UTC`;
  const next = d.attempts + 1;
  const of = limit === undefined ? "" : ` of ${Math.max(limit, next)}`;
  return `retrying automatically at ${when} (attempt ${next}${of})`;
}
