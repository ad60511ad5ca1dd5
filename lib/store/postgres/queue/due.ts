import type { DueSummary } from "../../../webhooks/model.ts";
import { RATE_HORIZON_MS } from "../../../webhooks/policy/rate-limit.ts";
import { type Db, toNumberOrNull } from "../db.ts";
import type { Int8 } from "./rows.ts";

/**
 * Earliest claimable queued delivery ($1 = horizon): its due time, but not before its webhook's
 * pause ends or its next send slot comes within the horizon. GREATEST ignores NULLs (SQLite's
 * max() does not), hence the explicit filter on webhooks with nothing queued.
 */
const NEXT_QUEUED_DUE_SQL = `
  SELECT min(GREATEST(q.t, GREATEST(w.paused_until, w.next_send_at) - $1)) AS t
  FROM webhooks w
  CROSS JOIN LATERAL (
    SELECT min(d.next_attempt_at) AS t FROM deliveries d
    WHERE d.state = 'queued' AND d.webhook_id = w.id) q
  WHERE w.enabled AND q.t IS NOT NULL`;

/**
 * Due work at $1 (now), for metrics: queued deliveries of enabled webhooks, read webhook by
 * webhook through deliveries_webhook_due (a disabled webhook's backlog is never read), and
 * expired leases.
 */
const DUE_SUMMARY_SQL = `
  SELECT count(*)::int AS n, min(due) AS oldest FROM (
    SELECT q.due FROM webhooks w
    CROSS JOIN LATERAL (
      SELECT d.next_attempt_at AS due FROM deliveries d
      WHERE d.webhook_id = w.id AND d.state = 'queued' AND d.next_attempt_at <= $1) q
    WHERE w.enabled
    UNION ALL
    SELECT d.lease_expires_at FROM deliveries d
    WHERE d.state = 'delivering' AND d.lease_expires_at <= $1) due_now`;

/** When work becomes due: for the worker's sleep and for /metrics. */
export function createDue(db: Db) {
  async function nextDueAt(): Promise<number | null> {
    // A paused or rate-limited webhook's backlog counts from when it may send again.
    const [row] = (await db.sql.unsafe(
      `SELECT (${NEXT_QUEUED_DUE_SQL}) AS queued,
        (SELECT d.lease_expires_at FROM deliveries d
          WHERE d.state = 'delivering'
          ORDER BY d.lease_expires_at LIMIT 1) AS lease`,
      [RATE_HORIZON_MS],
    )) as Array<{ queued: Int8 | null; lease: Int8 | null }>;
    const queued = toNumberOrNull(row?.queued ?? null);
    const lease = toNumberOrNull(row?.lease ?? null);
    if (queued === null) return lease;
    return lease === null ? queued : Math.min(queued, lease);
  }

  async function dueSummary(at: number): Promise<DueSummary> {
    const [row] = await db.sql.unsafe(DUE_SUMMARY_SQL, [at]);
    return { count: Number(row?.n ?? 0), oldestDueAt: toNumberOrNull(row?.oldest ?? null) };
  }

  return { nextDueAt, dueSummary };
}
