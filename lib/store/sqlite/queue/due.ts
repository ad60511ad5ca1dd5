import type { Database } from "bun:sqlite";
import type { DueSummary } from "../../../webhooks/model.ts";
import { RATE_HORIZON_MS } from "../../../webhooks/policy/rate-limit.ts";
import { CLAIM_SQL } from "./claim.ts";

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

/** The earliest time a queued delivery of an enabled webhook can be claimed (leases aside). */
export function nextQueuedDueAt(db: Database, horizonMs: number = RATE_HORIZON_MS): number | null {
  return db.query<{ t: number | null }, [number]>(CLAIM_SQL.nextQueued).get(horizonMs)?.t ?? null;
}

/** Earliest time something becomes due (queued or lease expiry), or null when nothing waits. */
export function nextDueAt(db: Database): number | null {
  const queued = nextQueuedDueAt(db);
  const lease = db.query<{ t: number }, []>(CLAIM_SQL.nextLease).get()?.t;
  if (queued === null) return lease ?? null;
  return lease === undefined ? queued : Math.min(queued, lease);
}
