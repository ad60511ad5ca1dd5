import parseDuration from "parse-duration";

/**
 * A webhook's retry schedule (`retry_schedule`, `--retry-schedule`): `none` (NetBox: no
 * automatic retry), `short` (doubling from WEBHOOK_RETRY_BASE_MS, WEBHOOK_MAX_ATTEMPTS
 * attempts: the schedule before there were others), `day` (Svix's, over 27 hours) or a list of
 * delays in ms, one per retry. Stored as the text formatRetrySchedule() writes.
 */
export type RetrySchedule = "none" | "short" | "day" | readonly number[];

export const RETRY_SCHEDULE_NAMES = ["none", "short", "day"] as const;

/** Svix's schedule after the first attempt: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (27.6 h). */
export const DAY_DELAYS_MS: readonly number[] = [
  5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000,
];

/** A webhook saved without a choice retries over a day: a deploy or a night's outage needs no one. */
export const DEFAULT_RETRY_SCHEDULE: RetrySchedule = "day";

/** Attempts of `short` when WEBHOOK_MAX_ATTEMPTS is not set (the old default). */
export const SHORT_ATTEMPTS = 5;

/** A list's bounds: 99 delays make 100 attempts, WEBHOOK_MAX_ATTEMPTS's highest value. */
export const MAX_SCHEDULE_DELAYS = 99;
const MIN_DELAY_MS = 1_000;
const MAX_DELAY_MS = 7 * 86_400_000;

export type ScheduleParse = { ok: true; value: RetrySchedule } | { ok: false; problem: string };

const EXPECTED =
  "expected none, short, day or a comma list of delays such as 5s,5m,30m,2h (each 1s to 7d, at most 99)";

/** A schedule as typed: a name, or delays with units (`5s,5m,30m,2h`). */
export function parseRetrySchedule(text: string): ScheduleParse {
  const trimmed = text.trim().toLowerCase();
  const named = RETRY_SCHEDULE_NAMES.find((name) => name === trimmed);
  if (named !== undefined) return { ok: true, value: named };
  const parts = trimmed.split(",").map((part) => part.trim());
  if (trimmed === "" || parts.length > MAX_SCHEDULE_DELAYS) return { ok: false, problem: EXPECTED };
  const delays: number[] = [];
  for (const part of parts) {
    // A bare number has no unit: "5" would be 5 ms to parse-duration, never what was meant.
    const ms = /^[\d.]+\s*[a-zµ]+([\d.]+\s*[a-zµ]+)*$/.test(part) ? parseDuration(part) : null;
    if (ms === null || ms === undefined || !Number.isFinite(ms)) {
      return { ok: false, problem: `${JSON.stringify(part)} is not a delay: ${EXPECTED}` };
    }
    if (ms < MIN_DELAY_MS || ms > MAX_DELAY_MS) {
      return { ok: false, problem: `${JSON.stringify(part)} is out of range: ${EXPECTED}` };
    }
    delays.push(Math.round(ms));
  }
  return { ok: true, value: delays };
}

const UNITS: Array<[string, number]> = [
  ["d", 86_400_000],
  ["h", 3_600_000],
  ["m", 60_000],
  ["s", 1_000],
];

/** One delay in the largest whole units, as a list shows it: 90 s is "1m30s". */
export function formatDelay(ms: number): string {
  let rest = ms;
  let text = "";
  for (const [unit, size] of UNITS) {
    const whole = Math.floor(rest / size);
    if (whole > 0) text += `${whole}${unit}`;
    rest -= whole * size;
  }
  if (rest > 0 || text === "") text += `${rest}ms`;
  return text;
}

/** The stored and shown form: the name, or the delays as `5s,5m,30m`; parses back the same. */
export function formatRetrySchedule(schedule: RetrySchedule): string {
  return typeof schedule === "string" ? schedule : schedule.map(formatDelay).join(",");
}

/** A stored schedule; text that does not parse (hand-edited) falls back to the default. */
export function storedRetrySchedule(text: string | null | undefined): RetrySchedule {
  if (text === null || text === undefined) return DEFAULT_RETRY_SCHEDULE;
  const parsed = parseRetrySchedule(text);
  return parsed.ok ? parsed.value : DEFAULT_RETRY_SCHEDULE;
}

/**
 * The attempts a schedule makes by itself, or null for `short`, whose count is the worker's
 * (WEBHOOK_MAX_ATTEMPTS, default 5). Stored beside the schedule so a claim can fail a lost
 * lease at the cap without parsing it in SQL.
 */
export function scheduleAttempts(schedule: RetrySchedule): number | null {
  if (schedule === "none") return 1;
  if (schedule === "short") return null;
  if (schedule === "day") return DAY_DELAYS_MS.length + 1;
  return schedule.length + 1;
}

/**
 * Attempts a delivery gets: the schedule's, cut by the worker's cap when one is set
 * (`maxAttempts`); `short` makes the cap's count, or SHORT_ATTEMPTS without one.
 */
export function attemptLimit(schedule: RetrySchedule, maxAttempts: number | null): number {
  return limitOfAttempts(scheduleAttempts(schedule), maxAttempts);
}

/** attemptLimit from a schedule's stored count (`webhooks.retry_attempts`; null: short). */
export function limitOfAttempts(own: number | null, maxAttempts: number | null): number {
  if (own === null) return maxAttempts ?? SHORT_ATTEMPTS;
  return maxAttempts === null ? own : Math.min(own, maxAttempts);
}
