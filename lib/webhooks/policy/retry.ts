import { backoffDelay } from "../../http/backoff.ts";
import type { AttemptOutcome, Outcome } from "../model.ts";

/**
 * What happens after an attempt, as data. Schedule (defaults): retry n waits 10 s × 2^(n-1)
 * ±20%, at most 1 h; at least 60 s after a timeout or a throttling answer (429, 502, 503, 504),
 * as Svix does; a `Retry-After` is honoured up to 1 h. 2xx succeeds; 410 Gone fails at once;
 * anything else (3xx, 4xx, 5xx, timeout, network error, SSRF refusal) is retried until
 * `maxAttempts` attempts were made.
 */
export interface RetryPolicy {
  maxAttempts: number;
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
  maxAttempts: 5,
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
 * The delivery's next state after attempt number `attempt` (1-based) ended at `now` with
 * `result`.
 */
export function decideOutcome(
  result: AttemptResult,
  attempt: number,
  policy: RetryPolicy,
  options: { now: number; random?: () => number },
): Outcome {
  if (result.outcome === "success" || isSuccess(result.statusCode)) return { state: "successful" };
  if (result.statusCode !== null && FAIL_AT_ONCE_STATUSES.has(result.statusCode))
    return { state: "failed" };
  // Nothing was rendered to send: another attempt would fail the same way.
  if (result.outcome === "template_error") return { state: "failed" };
  if (attempt >= policy.maxAttempts) return { state: "failed" };
  return {
    state: "queued",
    nextAttemptAt: options.now + retryDelay(result, attempt, policy, options.random),
  };
}

/** Delay before the attempt after `attempt` (the first retry follows attempt 1). */
export function retryDelay(
  result: AttemptResult,
  attempt: number,
  policy: RetryPolicy,
  random: () => number = Math.random,
): number {
  let delay = backoffDelay(attempt, {
    baseMs: policy.baseMs,
    maxMs: policy.maxMs,
    jitter: policy.jitter,
    random,
  });
  const slowDown =
    result.outcome === "timeout" ||
    (result.statusCode !== null && RETRY_SLOWLY_STATUSES.has(result.statusCode));
  if (slowDown) delay = Math.max(delay, policy.slowDownMs);
  if (result.retryAfterMs !== undefined) {
    delay = Math.max(delay, Math.min(result.retryAfterMs, policy.maxRetryAfterMs));
  }
  return delay;
}

/** The nominal delays (no jitter) between the attempts a policy allows, for docs and CLI output. */
export function retrySchedule(policy: RetryPolicy): number[] {
  return Array.from({ length: policy.maxAttempts - 1 }, (_, i) =>
    backoffDelay(i + 1, { baseMs: policy.baseMs, maxMs: policy.maxMs, jitter: 0 }),
  );
}
