import { DEFAULT_HEARTBEAT_MS, STALE_AFTER_BEATS } from "../observe/staleness.ts";

/** The takeover rule's numbers, for both stores' SQL: where a worker's beat counts, it is these. */
export { DEFAULT_HEARTBEAT_MS, STALE_AFTER_BEATS };

/**
 * What a taken-over delivery records as its lost attempt: the worker holding the lease never
 * reported, and nobody knows whether the request went out. The two parts let a store build
 * the text in SQL around the owner's name.
 */
export const LEASE_EXPIRED_TEXT = {
  before: "Lease expired: worker ",
  after: " did not report a result (the request may not have been sent)",
} as const;

export function leaseExpiredMessage(owner: string | null): string {
  return `${LEASE_EXPIRED_TEXT.before}${owner ?? "?"}${LEASE_EXPIRED_TEXT.after}`;
}

/** While live owners' leases are in their grace after an outage, look this often for gone ones. */
const GRACE_LOOK_MS = 1000;

/**
 * When the earliest lease expiry (`lease`) is due for a claim: at once, unless it falls in the
 * grace after an outage (the takeover rule, claim.ts), when it is due at the grace's end, looked
 * at every second meanwhile (its owner may turn out gone). Both stores' nextDueAt use it.
 */
export function leaseDueAt(lease: number, graceUntil: number, now: number): number {
  return lease < graceUntil ? Math.min(graceUntil, Math.max(lease, now + GRACE_LOOK_MS)) : lease;
}

/**
 * The takeover rule, whose SQL each store writes in its claim (SQLite's TAKEABLE, PostgreSQL's
 * `lost`): what it looks at for one delivery's lease. tests/store/takeover-rule.test.ts runs one
 * table of these against mayTakeOver() and against both stores' claims.
 */
export interface TakeoverFacts {
  now: number;
  leaseExpiresAt: number;
  /**
   * The latest outage a worker saw: when the database came back, and the end of the grace live
   * owners get to write what they held through it (graceAfterReturn). Both 0: none seen.
   */
  outage: { backAt: number; graceUntil: number };
  /** The owner's heartbeat row; null when it has none (gone, or never beat). */
  owner: { lastSeenAt: number; heartbeatMs?: number | null } | null;
  /** The claimer is the owner and still handles the delivery (WorkerCollaborators.claim's holding). */
  heldByClaimer: boolean;
}

/** A live owner keeps its expired leases for one lease after the database comes back. */
export function graceAfterReturn(backAt: number, leaseMs: number): number {
  return backAt + leaseMs;
}

/**
 * Whether a lease's owner counts as gone: no heartbeat row, or none for STALE_AFTER_BEATS of its
 * beats since the later of its last beat and the outage's end (nobody could beat during it).
 */
export function ownerGone(facts: Pick<TakeoverFacts, "now" | "outage" | "owner">): boolean {
  const { owner } = facts;
  if (owner === null) return true;
  const beatMs = owner.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
  const since = Math.max(owner.lastSeenAt, facts.outage.backAt);
  return since + STALE_AFTER_BEATS * beatMs < facts.now;
}

/**
 * Whether another claim may take a delivery's lease over: it has run out, the claimer does not
 * handle it itself, and either the grace after the latest outage is over or the owner is gone.
 */
export function mayTakeOver(facts: TakeoverFacts): boolean {
  if (facts.leaseExpiresAt > facts.now || facts.heldByClaimer) return false;
  return facts.now >= facts.outage.graceUntil || ownerGone(facts);
}
