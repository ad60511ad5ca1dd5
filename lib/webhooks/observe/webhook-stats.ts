import type { AttemptOutcome, Webhook } from "../model.ts";

/**
 * A webhook's health from its attempts (GET /api/webhooks/{id}/stats, its admin page, the CLI's
 * `stats --webhook`): counts by outcome over the last hour, day and week, the success rate, the
 * last success, the failing streak since, latency percentiles and the next automatic retry.
 * The stores read an AttemptTally through the attempts index by (webhook, outcome, time); what
 * it means is worked out here, as values.
 */

/** Every AttemptOutcome, in the order health counts show them. */
export const ATTEMPT_OUTCOMES: readonly AttemptOutcome[] = [
  "success",
  "http_error",
  "timeout",
  "network_error",
  "blocked",
  "lease_expired",
  "template_error",
];

export const STATS_WINDOWS = { hour: 3_600_000, day: 86_400_000, week: 7 * 86_400_000 } as const;
export type StatsWindow = keyof typeof STATS_WINDOWS;
export const STATS_WINDOW_NAMES = Object.keys(STATS_WINDOWS) as StatsWindow[];

/** Latency is of the newest answered attempts of the last day, at most this many. */
export const LATENCY_SAMPLE = 1000;

/** Outcomes where the receiver answered or was waited on: those whose duration is latency. */
export const ANSWERED_OUTCOMES: readonly AttemptOutcome[] = ["success", "http_error", "timeout"];
/** Every outcome but success: an attempt with one of these continues a failing streak. */
export const FAILED_OUTCOMES: readonly AttemptOutcome[] = ATTEMPT_OUTCOMES.filter(
  (outcome) => outcome !== "success",
);

/** What a store reads for one webhook's health, at `now`. */
export interface AttemptTally {
  /** Attempts started in each window (back from now), per outcome; absent outcomes are 0. */
  counts: Partial<Record<AttemptOutcome, Record<StatsWindow, number>>>;
  /** When the newest successful attempt started; null when none is kept. */
  lastSuccessAt: number | null;
  /** Attempts since the last success (every one failed), and when the first of them started. */
  failuresSince: { count: number; firstAt: number | null };
  /** Durations (ms) of the newest answered attempts of the last day, at most LATENCY_SAMPLE. */
  recentDurations: number[];
  /** When the next automatic retry of one of its deliveries is due; null when none waits. */
  nextRetryAt: number | null;
}

export interface WindowStats {
  since: number;
  attempts: number;
  outcomes: Record<AttemptOutcome, number>;
  /** Successful attempts / attempts, 0–1; null without attempts. */
  successRate: number | null;
}

export type HealthStatus = "healthy" | "failing" | "disabled" | "idle";

export interface WebhookStats {
  webhookId: number;
  status: HealthStatus;
  windows: Record<StatsWindow, WindowStats>;
  lastSuccessAt: number | null;
  /** When the first of the attempts failed in a row started; null while the last one succeeded. */
  failingSince: number | null;
  consecutiveFailures: number;
  latency: { p50: number; p95: number; sample: number } | null;
  nextRetryAt: number | null;
}

/** The `q` quantile (0–1) of `values` by the nearest-rank method; null when empty. */
export function percentile(values: readonly number[], q: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1] ?? null;
}

export function webhookStats(
  webhook: Pick<Webhook, "id" | "enabled">,
  tally: AttemptTally,
  now: number,
): WebhookStats {
  const windows = {} as Record<StatsWindow, WindowStats>;
  for (const name of STATS_WINDOW_NAMES) {
    const outcomes = {} as Record<AttemptOutcome, number>;
    let attempts = 0;
    for (const outcome of ATTEMPT_OUTCOMES) {
      outcomes[outcome] = tally.counts[outcome]?.[name] ?? 0;
      attempts += outcomes[outcome];
    }
    windows[name] = {
      since: now - STATS_WINDOWS[name],
      attempts,
      outcomes,
      successRate: attempts === 0 ? null : outcomes.success / attempts,
    };
  }
  const failing = tally.failuresSince.count > 0;
  const p50 = percentile(tally.recentDurations, 0.5);
  const p95 = percentile(tally.recentDurations, 0.95);
  return {
    webhookId: webhook.id,
    status: !webhook.enabled
      ? "disabled"
      : failing
        ? "failing"
        : tally.lastSuccessAt === null
          ? "idle"
          : "healthy",
    windows,
    lastSuccessAt: tally.lastSuccessAt,
    failingSince: failing ? tally.failuresSince.firstAt : null,
    consecutiveFailures: tally.failuresSince.count,
    latency:
      p50 === null || p95 === null ? null : { p50, p95, sample: tally.recentDurations.length },
    nextRetryAt: tally.nextRetryAt,
  };
}

/** What a list shows of each webhook: a store's AttemptSummary, read for many at once. */
export interface AttemptSummary {
  /** Attempts started in the last day, and how many of them succeeded. */
  dayAttempts: number;
  daySuccesses: number;
  lastSuccessAt: number | null;
  /** Some attempt failed after the last success (or with none kept). */
  failing: boolean;
}

/** A list's Health cell: the status (as webhookStats says it) and the day's success rate. */
export interface HealthSummary {
  status: HealthStatus;
  dayAttempts: number;
  daySuccessRate: number | null;
}

export function healthSummary(
  webhook: Pick<Webhook, "enabled">,
  summary: AttemptSummary | undefined,
): HealthSummary {
  const s = summary ?? { dayAttempts: 0, daySuccesses: 0, lastSuccessAt: null, failing: false };
  return {
    status: !webhook.enabled
      ? "disabled"
      : s.failing
        ? "failing"
        : s.lastSuccessAt === null
          ? "idle"
          : "healthy",
    dayAttempts: s.dayAttempts,
    daySuccessRate: s.dayAttempts === 0 ? null : s.daySuccesses / s.dayAttempts,
  };
}

/** A rate as a whole percent ("97%"), or "–" without attempts. */
export function percent(rate: number | null): string {
  if (rate === null) return "–";
  const value = rate * 100;
  // 99.6 % is not 100 %: only all of them is.
  return `${rate < 1 && value > 99 ? 99 : Math.round(value)}%`;
}

/** The stats as lines for people (the CLI), times by `formatTime`. */
export function statsLines(stats: WebhookStats, formatTime: (ms: number) => string): string[] {
  const when = (ms: number | null) => (ms === null ? "never" : formatTime(ms));
  const lines = [`  status        ${stats.status}`, `  last success  ${when(stats.lastSuccessAt)}`];
  if (stats.failingSince !== null) {
    lines.push(
      `  failing since ${formatTime(stats.failingSince)} (${stats.consecutiveFailures} ${stats.consecutiveFailures === 1 ? "attempt" : "attempts"} failed in a row)`,
    );
  }
  if (stats.nextRetryAt !== null) lines.push(`  next retry    ${formatTime(stats.nextRetryAt)}`);
  lines.push(
    stats.latency === null
      ? "  latency       – (no answered attempt in the last day)"
      : `  latency       p50 ${ms(stats.latency.p50)}, p95 ${ms(stats.latency.p95)} (newest ${stats.latency.sample} answered attempts of the last day)`,
  );
  lines.push("", `  WINDOW  ATTEMPTS  SUCCESS  ${ATTEMPT_OUTCOMES.slice(1).map(upper).join("  ")}`);
  for (const name of STATS_WINDOW_NAMES) {
    const w = stats.windows[name];
    const cells = [
      name.padEnd(6),
      String(w.attempts).padEnd(8),
      percent(w.successRate).padEnd(7),
      ...ATTEMPT_OUTCOMES.slice(1).map((o) => String(w.outcomes[o]).padEnd(upper(o).length)),
    ];
    lines.push(`  ${cells.join("  ").trimEnd()}`);
  }
  return lines;
}

function upper(outcome: string): string {
  return outcome.toUpperCase();
}

function ms(value: number): string {
  return value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${Math.round(value)} ms`;
}
