import { abortableSleep } from "../../async/sleep.ts";
import { backoffDelay, parseRetryAfter } from "../../http/backoff.ts";
import { describeNetworkError } from "../../http/network-error.ts";
import { BodyTooLargeError, formatBytes, readTextCapped } from "./body.ts";
import { parseJsonExactly } from "./exact-ids.ts";

/** Statuses worth another try: rate limiting and server trouble. Others fail at once. */
export const RETRY_STATUSES: ReadonlySet<number> = new Set([408, 429, 500, 502, 503, 504]);

export interface RetryPolicy {
  /** Retries after the first attempt. */
  retries: number;
  baseMs: number;
  maxMs: number;
  /** A Retry-After longer than this is not waited for: the request fails with a clear error. */
  maxRetryAfterMs: number;
  jitter: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  retries: 4,
  baseMs: 500,
  maxMs: 8_000,
  maxRetryAfterMs: 60_000,
  jitter: 0.2,
};

/** Only warnings are logged here; a consola logger fits, and so does a test's line collector. */
export interface WarnLogger {
  warn(message: string): void;
}

/**
 * The largest search answer read. 1,000 long comments with their highlight copies come to a few
 * MiB; anything far past that is a broken or hostile server, not a bigger thread.
 */
export const SEARCH_MAX_BYTES = 32 * 1024 * 1024;

export interface SearchFetchOptions {
  fetch?: typeof fetch;
  /** What the errors and warnings call the server: "Search API" (default), "Lobsters". */
  service?: string;
  timeoutMs?: number;
  /** Bodies larger than this fail the request (not retried); default SEARCH_MAX_BYTES. */
  maxBytes?: number;
  /** Stops the request and its retries (Ctrl-C). */
  signal?: AbortSignal;
  userAgent?: string;
  policy?: RetryPolicy;
  /** Injected so tests never wait; defaults to Bun.sleep. */
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
  random?: () => number;
  logger?: WarnLogger;
}

/** The search API could not be read: retries ran out, or the answer was unusable. */
export class SearchApiError extends Error {
  override name = "SearchApiError";
}

/**
 * Whether an attempt that ended with `status` (or a network error when undefined) is retried,
 * and after how long. Pure policy: tested as values.
 */
export function retryDecision(
  retry: number,
  outcome: { status?: number; retryAfter?: string | null },
  options: { policy: RetryPolicy; now: number; random?: () => number },
): { retry: true; delayMs: number } | { retry: false; reason: string } {
  const { policy } = options;
  if (outcome.status !== undefined && !RETRY_STATUSES.has(outcome.status)) {
    return { retry: false, reason: `HTTP ${outcome.status} is not retried` };
  }
  if (retry > policy.retries) {
    return { retry: false, reason: `gave up after ${policy.retries + 1} attempts` };
  }
  const asked = parseRetryAfter(outcome.retryAfter, options.now);
  if (asked !== undefined && asked > policy.maxRetryAfterMs) {
    return {
      retry: false,
      reason: `the server asked to wait ${Math.ceil(asked / 1000)} s (Retry-After), longer than ${policy.maxRetryAfterMs / 1000} s`,
    };
  }
  const backoff = backoffDelay(retry, {
    baseMs: policy.baseMs,
    maxMs: policy.maxMs,
    jitter: policy.jitter,
    random: options.random,
  });
  // Retry-After is the floor: never come back sooner than the server asked.
  return { retry: true, delayMs: Math.max(backoff, asked ?? 0) };
}

/**
 * GETs `url` and parses its JSON body, retrying 429, 5xx and network errors with exponential
 * backoff and jitter, honouring Retry-After, a bounded number of times. Throws SearchApiError.
 */
export async function fetchSearchJson(
  url: string,
  options: SearchFetchOptions = {},
): Promise<unknown> {
  const {
    fetch: doFetch = globalThis.fetch,
    timeoutMs = 10_000,
    policy = DEFAULT_RETRY_POLICY,
    signal,
    sleep = (ms: number) => (signal ? abortableSleep(ms, signal) : Bun.sleep(ms)),
    now = Date.now,
    random,
    logger,
    maxBytes = SEARCH_MAX_BYTES,
    service = "Search API",
  } = options;
  const headers: Record<string, string> = { accept: "application/json" };
  if (options.userAgent) headers["user-agent"] = options.userAgent;

  for (let attempt = 1; ; attempt++) {
    if (signal?.aborted)
      throw new SearchApiError(`${service} request stopped: interrupted: ${url}`);
    let outcome: { status?: number; retryAfter?: string | null };
    let problem: string;
    try {
      const timeout = AbortSignal.timeout(timeoutMs);
      const response = await doFetch(url, {
        headers,
        signal: signal ? AbortSignal.any([timeout, signal]) : timeout,
      });
      if (response.ok) {
        const text = await readTextCapped(response, maxBytes);
        try {
          return parseJsonExactly(text);
        } catch {
          throw new SearchApiError(`${service} returned a body that is not JSON: ${url}`);
        }
      }
      await response.body?.cancel();
      outcome = { status: response.status, retryAfter: response.headers.get("retry-after") };
      problem = `HTTP ${response.status}`;
    } catch (error) {
      if (error instanceof SearchApiError) throw error;
      // Stopped (Ctrl-C, or the digest giving up): no retry, and no warning about it.
      if (signal?.aborted) {
        throw new SearchApiError(`${service} request stopped: interrupted: ${url}`);
      }
      if (error instanceof BodyTooLargeError) {
        throw new SearchApiError(
          `${service} answer is larger than ${formatBytes(maxBytes)}; stopped reading it: ${url}`,
        );
      }
      outcome = {};
      problem = networkProblem(error, timeoutMs, url);
    }
    const decision = retryDecision(attempt, outcome, { policy, now: now(), random });
    if (!decision.retry) {
      throw new SearchApiError(
        `${service} request failed (${problem}; ${decision.reason}): ${url}`,
      );
    }
    logger?.warn(
      `${service} ${problem}, retry ${attempt} of ${policy.retries} in ${decision.delayMs} ms: ${url}`,
    );
    await sleep(decision.delayMs);
  }
}

function networkProblem(error: unknown, timeoutMs: number, url: string): string {
  if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")) {
    return `no answer within ${timeoutMs} ms`;
  }
  return `network error: ${describeNetworkError(error, url)}`;
}
