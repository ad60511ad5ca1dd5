import type { Database } from "bun:sqlite";
import type { AttemptOutcome, AttemptSample, DueSummary } from "../../webhooks/model.ts";

/**
 * Due work at `?1` (now): queued deliveries of enabled webhooks whose time has come (walks the
 * deliveries_due index over due rows only), and leases that expired (their worker died).
 */
export const DUE_SUMMARY_SQLITE = `
  SELECT count(*) AS n, min(due) AS oldest FROM (
    SELECT d.next_attempt_at AS due FROM deliveries d INDEXED BY deliveries_due
    WHERE d.state = 'queued' AND d.next_attempt_at <= ?1
      AND EXISTS (SELECT 1 FROM webhooks w WHERE w.id = d.webhook_id AND w.enabled = 1)
    UNION ALL
    SELECT d.lease_expires_at FROM deliveries d INDEXED BY deliveries_leased
    WHERE d.state = 'delivering' AND d.lease_expires_at <= ?1)`;

export function dueSummary(db: Database, now: number): DueSummary {
  const row = db.query<{ n: number; oldest: number | null }, [number]>(DUE_SUMMARY_SQLITE).get(now);
  return { count: row?.n ?? 0, oldestDueAt: row?.oldest ?? null };
}

const LAST_ATTEMPT_ID_SQL = "SELECT coalesce(max(id), 0) AS id FROM attempts";
const ATTEMPTS_AFTER_SQL = `
  SELECT id, status_code, outcome, duration_ms FROM attempts
  WHERE id > ?1 ORDER BY id LIMIT ?2`;

/** The newest attempt id (0 when none): where the app's /metrics starts counting. */
export function lastAttemptId(db: Database): number {
  return db.query<{ id: number }, []>(LAST_ATTEMPT_ID_SQL).get()?.id ?? 0;
}

/**
 * Attempts recorded after `afterId`, oldest first. With SQLite's single writer, ids commit in
 * order, so reading past the last id seen misses nothing.
 */
export function attemptsAfter(db: Database, afterId: number, limit: number): AttemptSample[] {
  return db
    .query<
      { id: number; status_code: number | null; outcome: AttemptOutcome; duration_ms: number },
      [number, number]
    >(ATTEMPTS_AFTER_SQL)
    .all(afterId, limit)
    .map((row) => ({
      id: row.id,
      statusCode: row.status_code,
      outcome: row.outcome,
      durationMs: row.duration_ms,
    }));
}
