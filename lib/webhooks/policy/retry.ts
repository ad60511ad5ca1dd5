import { backoffDelay } from "../../http/backoff.ts";
import type { AttemptOutcome, Outcome } from "../model.ts";
import {
  attemptLimit,
  DAY_DELAYS_MS,
  type RetrySchedule,
  SHORT_ATTEMPTS,
} from "./retry-schedule.ts";

/**
 * What happens after an attempt, as data. The delay before retry n comes from the webhook's
 * schedule (retry-schedule.ts): `day` and lists by their n-th delay, `short` as 10 s × 2^(n-1)
 * at most 1 h (WEBHOOK_RETRY_BASE_MS / _MAX_MS); either ±20%; at least 60 s after a timeout or
 * a throttling answer (429, 502, 503, 504), as Svix does; a `Retry-After` is honoured up to 1 h.
 * 2xx succeeds; 410 Gone fails at once; anything else (3xx, 4xx, 5xx, timeout, network error,
 * SSRF refusal) is retried until the schedule's attempts, cut by `maxAttempts`, were made.
 */
export interface RetryPolicy {
  /** WEBHOOK_MAX_ATTEMPTS: caps every schedule, and is `short`'s count; null when not set. */
  maxAttempts: number | null;
  /** `short`: the first delay, doubling up to maxMs. */
  baseMs: number;
  maxMs: number;
  /** ±fraction of each delay that is random, so retries of one outage do not arrive together. */
  jitter: number;
  /** Least delay after a timeout or a throttling status. */
  slowDownMs: number;
  /** Longest `Retry-After` obeyed; a longer one is cut to this. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: null,
  baseMs: 10_000,
  maxMs: 3_600_000,
  jitter: 0.2,
  slowDownMs: 60_000,
  maxRetryAfterMs: 3_600_000,
};

/** Fail the delivery at once, never retried: the receiver said the endpoint is gone for good. */
export const FAIL_AT_ONCE_STATUSES: ReadonlySet<number> = new Set([410]);
/** Retry no sooner than `slowDownMs`: the receiver is overloaded or rate limiting. */
export const RETRY_SLOWLY_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);

export interface AttemptResult {
  outcome: AttemptOutcome;
  statusCode: number | null;
  /** Parsed `Retry-After`, in ms from the attempt's end. */
  retryAfterMs?: number;
}

export function isSuccess(statusCode: number | null): boolean {
  return statusCode !== null && statusCode >= 200 && statusCode <= 299;
}

/**
 * A delivery waiting for an automatic retry: queued again after an attempt whose answer was not
 * 2XX. Its state stays `queued` (the claim and the guarantees know no other); the admin lists it
 * under Failed, and a retry (admin, CLI, API) makes it due now.
 */
export function awaitsRetry(d: {
  state: string;
  attempts: number;
  lastStatus: number | null;
}): boolean {
  return d.state === "queued" && d.attempts > 0 && !isSuccess(d.lastStatus);
}

/**
 * The delivery's next state after attempt number `attempt` (1-based) ended at `now` with
 * `result`, on the webhook's `schedule` (default `short`).
 */
export function decideOutcome(
  result: AttemptResult,
  attempt: number,
  policy: RetryPolicy,
  options: { now: number; random?: () => number; schedule?: RetrySchedule },
): Outcome {
  const schedule = options.schedule ?? "short";
  if (result.outcome === "success" || isSuccess(result.statusCode)) return { state: "successful" };
  if (result.statusCode !== null && FAIL_AT_ONCE_STATUSES.has(result.statusCode))
    return { state: "failed" };
  // Nothing was rendered to send: another attempt would fail the same way.
  if (result.outcome === "template_error") return { state: "failed" };
  if (attempt >= attemptLimit(schedule, policy.maxAttempts)) return { state: "failed" };
  return {
    state: "queued",
    nextAttemptAt: options.now + retryDelay(result, attempt, policy, options.random, schedule),
  };
}

/** The schedule's delay after attempt `attempt`, before jitter and the floors below. */
function scheduledDelay(attempt: number, policy: RetryPolicy, schedule: RetrySchedule): number {
  if (schedule === "short" || schedule === "none") {
    return backoffDelay(attempt, { baseMs: policy.baseMs, maxMs: policy.maxMs, jitter: 0 });
  }
  const delays = schedule === "day" ? DAY_DELAYS_MS : schedule;
  // A manual retry past the end (one more attempt) waits as long as the last step.
  return delays[Math.min(attempt, delays.length) - 1] ?? 0;
}

/** Delay before the attempt after `attempt` (the first retry follows attempt 1). */
export function retryDelay(
  result: AttemptResult,
  attempt: number,
  policy: RetryPolicy,
  random: () => number = Math.random,
  schedule: RetrySchedule = "short",
): number {
  const nominal = scheduledDelay(attempt, policy, schedule);
  // ±jitter, as backoffDelay spreads `short`'s: retries of one outage do not arrive together.
  let delay = Math.max(0, Math.round(nominal + nominal * policy.jitter * (random() * 2 - 1)));
  if (schedule === "short" || schedule === "none") delay = Math.min(delay, policy.maxMs);
  const slowDown =
    result.outcome === "timeout" ||
    (result.statusCode !== null && RETRY_SLOWLY_STATUSES.has(result.statusCode));
  if (slowDown) delay = Math.max(delay, policy.slowDownMs);
  if (result.retryAfterMs !== undefined) {
    delay = Math.max(delay, Math.min(result.retryAfterMs, policy.maxRetryAfterMs));
  }
  return delay;
}

/**
 * The nominal delays (no jitter) between the attempts a policy allows on `schedule` (default
 * `short`), for docs and CLI output.
 */
export function retrySchedule(policy: RetryPolicy, schedule: RetrySchedule = "short"): number[] {
  const attempts = attemptLimit(schedule, policy.maxAttempts);
  return Array.from({ length: attempts - 1 }, (_, i) => scheduledDelay(i + 1, policy, schedule));
}

/** `short`'s attempts under this policy (the demo's text). */
export function shortAttempts(policy: RetryPolicy): number {
  return policy.maxAttempts ?? SHORT_ATTEMPTS;
}
