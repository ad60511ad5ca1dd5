export interface BackoffOptions {
  /** Delay before the first retry, in ms. */
  baseMs: number;
  /** Upper bound of any one delay, in ms. */
  maxMs: number;
  /** Fraction of the delay that is randomised, 0..1 (0.2 = ±20%). */
  jitter?: number;
  /** Injected for tests; defaults to Math.random. */
  random?: () => number;
}

/** Exponential backoff with jitter: `retry` counts from 1 (the first retry waits about `baseMs`). */
export function backoffDelay(retry: number, options: BackoffOptions): number {
  const { baseMs, maxMs, jitter = 0.2, random = Math.random } = options;
  const exponential = Math.min(maxMs, baseMs * 2 ** Math.max(0, retry - 1));
  const spread = exponential * jitter * (random() * 2 - 1);
  return Math.max(0, Math.round(Math.min(maxMs, exponential + spread)));
}

/**
 * Parses a `Retry-After` header (delta seconds or an HTTP date) into milliseconds from `now`.
 * Returns undefined when absent or unparseable, so callers fall back to their own backoff.
 */
export function parseRetryAfter(value: string | null | undefined, now: number): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}
