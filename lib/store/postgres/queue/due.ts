import { leaseDueAt } from "../../../webhooks/delivery/lease.ts";
import type { DueSummary } from "../../../webhooks/model.ts";
import { RATE_HORIZON_MS } from "../../../webhooks/policy/rate-limit.ts";
import { DATABASE_NOW_MS, type StoreClock } from "../clock.ts";
import { type Db, toNumber, toNumberOrNull } from "../db.ts";
import type { Int8 } from "./rows.ts";

/**
 * Ordered delivery (as SQLite's ORDERED_READY_SQLITE; the claim in claim.ts spells it out the
 * same): an ordered delivery `d` waits while an earlier one (lower id) of the same object to
 * the same webhook is queued or being delivered. Ids are in commit order for one object: its
 * changes lock the item row until they commit, and take their ids after the lock.
 */
export const ORDERED_READY_PG = `(NOT d.ordered OR NOT EXISTS (
    SELECT 1 FROM deliveries e
    WHERE e.webhook_id = d.webhook_id AND e.object_model = d.object_model
      AND e.object_id = d.object_id AND e.ordered AND e.state IN ('queued', 'delivering')
      AND e.id < d.id))`;

/**
 * Earliest claimable queued delivery ($1 = horizon): its due time, but not before its webhook's
 * pause ends or its next send slot comes within the horizon. GREATEST ignores NULLs (SQLite's
 * max() does not), hence the explicit filter on webhooks with nothing queued.
 */
const NEXT_QUEUED_DUE_SQL = `
  SELECT min(GREATEST(q.t, GREATEST(w.paused_until, w.next_send_at) - $1)) AS t
  FROM webhooks w
  CROSS JOIN LATERAL (
    SELECT d.next_attempt_at AS t FROM deliveries d
    WHERE d.state = 'queued' AND d.webhook_id = w.id AND ${ORDERED_READY_PG}
    ORDER BY d.next_attempt_at LIMIT 1) q
  WHERE w.enabled AND q.t IS NOT NULL`;

/**
 * Due work now, for metrics ($1: a test clock's reading, or null for the database's time):
 * queued deliveries of enabled webhooks, read webhook by webhook through deliveries_webhook_due
 * (a disabled webhook's backlog is never read), and expired leases.
 */
const DUE_SUMMARY_SQL = `
  WITH clock AS (SELECT coalesce($1::bigint, ${DATABASE_NOW_MS}) AS t)
  SELECT count(*)::int AS n, min(due) AS oldest, (SELECT t FROM clock) AS clock_now FROM (
    SELECT q.due FROM webhooks w
    CROSS JOIN LATERAL (
      SELECT d.next_attempt_at AS due FROM deliveries d
      WHERE d.webhook_id = w.id AND d.state = 'queued'
        AND d.next_attempt_at <= (SELECT t FROM clock)) q
    WHERE w.enabled
    UNION ALL
    SELECT d.lease_expires_at FROM deliveries d
    WHERE d.state = 'delivering' AND d.lease_expires_at <= (SELECT t FROM clock)) due_now`;

/** When work becomes due: for the worker's sleep and for /metrics. */
export function createDue(db: Db, clock: StoreClock) {
  /** The next due time, as the caller's clock reads it (the worker sleeps until then). */
  async function nextDueAt(): Promise<number | null> {
    const callerNow = clock.callerNow();
    // A paused or rate-limited webhook's backlog counts from when it may send again.
    const [row] = (await db.sql.unsafe(
      `SELECT (${NEXT_QUEUED_DUE_SQL}) AS queued,
        (SELECT d.lease_expires_at FROM deliveries d
          WHERE d.state = 'delivering'
          ORDER BY d.lease_expires_at LIMIT 1) AS lease,
        (SELECT grace_until FROM outages WHERE id = 1) AS grace,
        coalesce($2::bigint, ${DATABASE_NOW_MS}) AS clock_now`,
      [RATE_HORIZON_MS, clock.param(callerNow)],
    )) as Array<{ queued: Int8 | null; lease: Int8 | null; grace: Int8 | null; clock_now: Int8 }>;
    const queued = toNumberOrNull(row?.queued ?? null);
    const expiry = toNumberOrNull(row?.lease ?? null);
    const databaseNow = toNumber(row?.clock_now ?? 0);
    const grace = toNumber(row?.grace ?? 0);
    const lease = expiry === null ? null : leaseDueAt(expiry, grace, databaseNow);
    const due = queued === null ? lease : lease === null ? queued : Math.min(queued, lease);
    if (due === null) return null;
    return clock.toCaller(due, databaseNow, callerNow);
  }

  async function dueSummary(callerNow: number): Promise<DueSummary> {
    const [row] = await db.sql.unsafe(DUE_SUMMARY_SQL, [clock.param(callerNow)]);
    const oldest = toNumberOrNull(row?.oldest ?? null);
    return {
      count: Number(row?.n ?? 0),
      oldestDueAt:
        oldest === null ? null : clock.toCaller(oldest, toNumber(row?.clock_now ?? 0), callerNow),
    };
  }

  return { nextDueAt, dueSummary };
}
