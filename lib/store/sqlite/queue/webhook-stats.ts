import type { Database } from "bun:sqlite";
import type { AttemptOutcome } from "../../../webhooks/model.ts";
import {
  ANSWERED_OUTCOMES,
  type AttemptSummary,
  type AttemptTally,
  FAILED_OUTCOMES,
  LATENCY_SAMPLE,
  STATS_WINDOWS,
} from "../../../webhooks/observe/webhook-stats.ts";
import type { Params } from "./rows.ts";

const list = (outcomes: readonly AttemptOutcome[]) => outcomes.map((o) => `'${o}'`).join(", ");

/**
 * One webhook's attempts, read through attempts_webhook_outcome (webhook, outcome, started_at,
 * duration_ms; migration 16): every statement is index ranges, one per outcome, and never
 * reads the table. Exported so a test can check their plans.
 */
export const STATS_SQL = {
  counts: `SELECT outcome, count(*) AS week, sum(started_at >= $day) AS day,
      sum(started_at >= $hour) AS hour
    FROM attempts INDEXED BY attempts_webhook_outcome
    WHERE webhook_id = $webhook AND outcome IN (${list(["success", ...FAILED_OUTCOMES])})
      AND started_at >= $week
    GROUP BY outcome`,
  lastSuccess: `SELECT max(started_at) AS at FROM attempts INDEXED BY attempts_webhook_outcome
    WHERE webhook_id = $webhook AND outcome = 'success'`,
  streak: `SELECT count(*) AS n, min(started_at) AS first
    FROM attempts INDEXED BY attempts_webhook_outcome
    WHERE webhook_id = $webhook AND outcome IN (${list(FAILED_OUTCOMES)}) AND started_at > $after`,
  durations: `SELECT started_at, duration_ms FROM attempts INDEXED BY attempts_webhook_outcome
    WHERE webhook_id = $webhook AND outcome = $outcome AND started_at >= $day
    ORDER BY started_at DESC LIMIT ${LATENCY_SAMPLE}`,
  /** A list's day: every attempt of the day and its successes, one range per outcome. */
  day: `SELECT count(*) AS n, coalesce(sum(outcome = 'success'), 0) AS ok
    FROM attempts INDEXED BY attempts_webhook_outcome
    WHERE webhook_id = $webhook AND outcome IN (${list(["success", ...FAILED_OUTCOMES])})
      AND started_at >= $day`,
  /** Whether an attempt failed after the last success: a seek per outcome. */
  failingSince: `SELECT EXISTS (SELECT 1 FROM attempts INDEXED BY attempts_webhook_outcome
    WHERE webhook_id = $webhook AND outcome IN (${list(FAILED_OUTCOMES)}) AND started_at > $after)
    AS failing`,
  /** Its deliveries waiting for an automatic retry (retrying.ts), from the claim's index. */
  nextRetry: `SELECT min(next_attempt_at) AS at FROM deliveries INDEXED BY deliveries_webhook_due
    WHERE webhook_id = $webhook AND state = 'queued' AND attempts > 0
      AND (last_status IS NULL OR last_status NOT BETWEEN 200 AND 299)`,
} as const;

type Counted = { outcome: AttemptOutcome; week: number; day: number; hour: number };

/** Many webhooks' AttemptSummary at `now` (a list's Health column), from one read snapshot. */
export function createAttemptSummaries(db: Database) {
  const dayStmt = db.prepare<{ n: number; ok: number }, Params>(STATS_SQL.day);
  const lastSuccessStmt = db.prepare<{ at: number | null }, Params>(STATS_SQL.lastSuccess);
  const failingStmt = db.prepare<{ failing: number }, Params>(STATS_SQL.failingSince);
  return db.transaction((ids: readonly number[], now: number) => {
    const summaries = new Map<number, AttemptSummary>();
    for (const webhook of ids) {
      const day = dayStmt.get({ webhook, day: now - STATS_WINDOWS.day });
      const lastSuccessAt = lastSuccessStmt.get({ webhook })?.at ?? null;
      const failing = failingStmt.get({ webhook, after: lastSuccessAt ?? -1 })?.failing === 1;
      summaries.set(webhook, {
        dayAttempts: day?.n ?? 0,
        daySuccesses: day?.ok ?? 0,
        lastSuccessAt,
        failing,
      });
    }
    return summaries;
  });
}

/** A webhook's AttemptTally at `now`, from one read snapshot. */
export function createWebhookStats(db: Database) {
  const countsStmt = db.prepare<Counted, Params>(STATS_SQL.counts);
  const lastSuccessStmt = db.prepare<{ at: number | null }, Params>(STATS_SQL.lastSuccess);
  const streakStmt = db.prepare<{ n: number; first: number | null }, Params>(STATS_SQL.streak);
  const durationsStmt = db.prepare<{ started_at: number; duration_ms: number }, Params>(
    STATS_SQL.durations,
  );
  const nextRetryStmt = db.prepare<{ at: number | null }, Params>(STATS_SQL.nextRetry);

  return db.transaction((webhook: number, now: number): AttemptTally => {
    const counts: AttemptTally["counts"] = {};
    const since = {
      hour: now - STATS_WINDOWS.hour,
      day: now - STATS_WINDOWS.day,
      week: now - STATS_WINDOWS.week,
    };
    for (const row of countsStmt.all({ webhook, ...since })) {
      counts[row.outcome] = { hour: row.hour, day: row.day, week: row.week };
    }
    const lastSuccessAt = lastSuccessStmt.get({ webhook })?.at ?? null;
    const streak = streakStmt.get({ webhook, after: lastSuccessAt ?? -1 });
    const recent = ANSWERED_OUTCOMES.flatMap((outcome) =>
      durationsStmt.all({ webhook, outcome, day: since.day }),
    );
    recent.sort((a, b) => b.started_at - a.started_at);
    return {
      counts,
      lastSuccessAt,
      failuresSince: { count: streak?.n ?? 0, firstAt: streak?.first ?? null },
      recentDurations: recent.slice(0, LATENCY_SAMPLE).map((row) => row.duration_ms),
      nextRetryAt: nextRetryStmt.get({ webhook })?.at ?? null,
    };
  });
}
