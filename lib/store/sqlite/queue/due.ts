import type { Database } from "bun:sqlite";
import { leaseDueAt } from "../../../webhooks/delivery/lease.ts";
import type { DueSummary } from "../../../webhooks/model.ts";
import { RATE_HORIZON_MS } from "../../../webhooks/policy/rate-limit.ts";
import { CLAIM_SQL } from "./claim.ts";

/**
 * Due work at `?1` (now): queued deliveries of enabled webhooks whose time has come, read
 * webhook by webhook (CROSS JOIN keeps webhooks outside), so a disabled webhook's backlog is
 * never read; and leases that expired (their worker died).
 */
export const DUE_SUMMARY_SQLITE = `
  SELECT count(*) AS n, min(due) AS oldest FROM (
    SELECT d.next_attempt_at AS due
    FROM webhooks w CROSS JOIN deliveries d INDEXED BY deliveries_webhook_due
    WHERE w.enabled = 1 AND d.webhook_id = w.id AND d.state = 'queued'
      AND d.next_attempt_at <= ?1
    UNION ALL
    SELECT d.lease_expires_at FROM deliveries d INDEXED BY deliveries_leased
    WHERE d.state = 'delivering' AND d.lease_expires_at <= ?1)`;

export function dueSummary(db: Database, now: number): DueSummary {
  const row = db.query<{ n: number; oldest: number | null }, [number]>(DUE_SUMMARY_SQLITE).get(now);
  return { count: row?.n ?? 0, oldestDueAt: row?.oldest ?? null };
}

/** The earliest time a queued delivery of an enabled webhook can be claimed (leases aside). */
export function nextQueuedDueAt(db: Database, horizonMs: number = RATE_HORIZON_MS): number | null {
  return db.query<{ t: number | null }, [number]>(CLAIM_SQL.nextQueued).get(horizonMs)?.t ?? null;
}

/**
 * Earliest time something becomes due (queued or lease expiry), or null when nothing waits. An
 * expired lease in its grace after an outage (claim.ts TAKEABLE) is due when the grace ends,
 * looked at every second meanwhile (its owner may turn out gone).
 */
export function nextDueAt(db: Database, now: number): number | null {
  const queued = nextQueuedDueAt(db);
  let lease = db.query<{ t: number }, []>(CLAIM_SQL.nextLease).get()?.t;
  if (lease !== undefined) {
    lease = leaseDueAt(lease, db.query<{ t: number }, []>(GRACE_SQL).get()?.t ?? 0, now);
  }
  if (queued === null) return lease ?? null;
  return lease === undefined ? queued : Math.min(queued, lease);
}

const GRACE_SQL = "SELECT grace_until AS t FROM outages WHERE id = 1";
