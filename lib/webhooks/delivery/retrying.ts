import type { Delivery, Webhook } from "../model.ts";
import { awaitsRetry } from "../policy/retry.ts";
import { attemptLimit } from "../policy/retry-schedule.ts";

/**
 * A delivery waiting for an automatic retry (policy/retry.ts): listed under Failed by the admin
 * and by `bun run webhooks deliveries --state failed`, with when it is tried next.
 */
export const isRetrying = awaitsRetry;

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
