import type { AttemptOutcome } from "../../../webhooks/model.ts";
import {
  ANSWERED_OUTCOMES,
  type AttemptSummary,
  type AttemptTally,
  FAILED_OUTCOMES,
  LATENCY_SAMPLE,
  STATS_WINDOWS,
} from "../../../webhooks/observe/webhook-stats.ts";
import { type Db, toNumber, toNumberOrNull } from "../db.ts";
import type { Int8 } from "./rows.ts";

type Row = {
  counts: Array<{ outcome: AttemptOutcome; week: number; day: number; hour: number }> | null;
  last_success: string | number | null;
  streak_n: string | number;
  streak_first: string | number | null;
  durations: number[] | null;
  next_retry: string | number | null;
};

/** Many webhooks' AttemptSummary in one statement, as SQLite's: the day's ranges and seeks. */
export function createAttemptSummaries(db: Db) {
  return async function attemptSummaries(
    webhookIds: readonly number[],
    now: number,
  ): Promise<Map<number, AttemptSummary>> {
    const ids = webhookIds.filter((id) => Number.isSafeInteger(id));
    const summaries = new Map<number, AttemptSummary>();
    if (ids.length === 0) return summaries;
    const day = now - STATS_WINDOWS.day;
    const all = ["success", ...FAILED_OUTCOMES];
    const rows = await db.sql<
      Array<{
        id: Int8;
        day_n: number;
        day_ok: number;
        last_success: Int8 | null;
        failing: boolean;
      }>
    >`
      SELECT w.id,
        (SELECT count(*)::int FROM attempts a WHERE a.webhook_id = w.id
           AND a.outcome = ANY(${all}::text[]) AND a.started_at >= ${day}::bigint) AS day_n,
        (SELECT count(*)::int FROM attempts a WHERE a.webhook_id = w.id
           AND a.outcome = 'success' AND a.started_at >= ${day}::bigint) AS day_ok,
        ls.at AS last_success,
        EXISTS (SELECT 1 FROM attempts a WHERE a.webhook_id = w.id
          AND a.outcome = ANY(${[...FAILED_OUTCOMES]}::text[])
          AND a.started_at > coalesce(ls.at, -1)) AS failing
      FROM unnest(${ids}::bigint[]) AS w(id)
      CROSS JOIN LATERAL (SELECT max(started_at) AS at FROM attempts
        WHERE webhook_id = w.id AND outcome = 'success') ls`;
    for (const row of rows) {
      summaries.set(toNumber(row.id), {
        dayAttempts: Number(row.day_n),
        daySuccesses: Number(row.day_ok),
        lastSuccessAt: toNumberOrNull(row.last_success),
        failing: row.failing,
      });
    }
    return summaries;
  };
}

/**
 * One webhook's attempts as SQLite's STATS_SQL reads them, in one statement (one snapshot),
 * through attempts_webhook_outcome (webhook, outcome, started_at) INCLUDE (duration_ms)
 * (migration 13): index ranges, one per outcome.
 */
export function createWebhookStats(db: Db) {
  return async function attemptTally(webhookId: number, now: number): Promise<AttemptTally> {
    const hour = now - STATS_WINDOWS.hour;
    const day = now - STATS_WINDOWS.day;
    const week = now - STATS_WINDOWS.week;
    const all = ["success", ...FAILED_OUTCOMES];
    const [a, b, c] = ANSWERED_OUTCOMES;
    const [row] = await db.sql<Row[]>`
      WITH counts AS (
        SELECT outcome, count(*)::int AS week,
          (count(*) FILTER (WHERE started_at >= ${day}::bigint))::int AS day,
          (count(*) FILTER (WHERE started_at >= ${hour}::bigint))::int AS hour
        FROM attempts
        WHERE webhook_id = ${webhookId}::bigint AND outcome = ANY(${all}::text[])
          AND started_at >= ${week}::bigint
        GROUP BY outcome
      ), last_success AS (
        SELECT max(started_at) AS at FROM attempts
        WHERE webhook_id = ${webhookId}::bigint AND outcome = 'success'
      ), streak AS (
        SELECT count(*) AS n, min(started_at) AS first FROM attempts
        WHERE webhook_id = ${webhookId}::bigint AND outcome = ANY(${[...FAILED_OUTCOMES]}::text[])
          AND started_at > coalesce((SELECT at FROM last_success), -1)
      ), recent AS (
        -- The newest answered attempts of the day: each outcome's from its own index range.
        SELECT duration_ms FROM (
          (SELECT started_at, duration_ms FROM attempts
           WHERE webhook_id = ${webhookId}::bigint AND outcome = ${a}::text
             AND started_at >= ${day}::bigint
           ORDER BY started_at DESC LIMIT ${LATENCY_SAMPLE}::int)
          UNION ALL
          (SELECT started_at, duration_ms FROM attempts
           WHERE webhook_id = ${webhookId}::bigint AND outcome = ${b}::text
             AND started_at >= ${day}::bigint
           ORDER BY started_at DESC LIMIT ${LATENCY_SAMPLE}::int)
          UNION ALL
          (SELECT started_at, duration_ms FROM attempts
           WHERE webhook_id = ${webhookId}::bigint AND outcome = ${c}::text
             AND started_at >= ${day}::bigint
           ORDER BY started_at DESC LIMIT ${LATENCY_SAMPLE}::int)) r
        ORDER BY started_at DESC LIMIT ${LATENCY_SAMPLE}::int
      )
      SELECT (SELECT json_agg(counts) FROM counts) AS counts,
        (SELECT at FROM last_success) AS last_success,
        (SELECT n FROM streak) AS streak_n, (SELECT first FROM streak) AS streak_first,
        (SELECT array_agg(duration_ms) FROM recent) AS durations,
        -- Its deliveries waiting for an automatic retry (retrying.ts).
        (SELECT min(next_attempt_at) FROM deliveries
         WHERE webhook_id = ${webhookId}::bigint AND state = 'queued' AND attempts > 0
           AND (last_status IS NULL OR last_status NOT BETWEEN 200 AND 299)) AS next_retry`;
    const counts: AttemptTally["counts"] = {};
    for (const c of row?.counts ?? []) {
      counts[c.outcome] = { hour: c.hour, day: c.day, week: c.week };
    }
    return {
      counts,
      lastSuccessAt: toNumberOrNull(row?.last_success ?? null),
      failuresSince: {
        count: Number(row?.streak_n ?? 0),
        firstAt: toNumberOrNull(row?.streak_first ?? null),
      },
      recentDurations: (row?.durations ?? []).map(Number),
      nextRetryAt: toNumberOrNull(row?.next_retry ?? null),
    };
  };
}
