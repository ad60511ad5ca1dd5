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

/** While a lease that ran out may still be kept by a live owner, look this often for gone ones. */
const GRACE_LOOK_MS = 1000;

/**
 * When the earliest lease expiry (`lease`) is due for a claim: when it runs out, unless it has
 * run out already or falls in the grace after an outage (the takeover rule: a live owner keeps
 * it for one more lease, or to the grace's end). Then it is looked at every second (its owner may
 * turn out gone), and at the grace's end. Both stores' nextDueAt use it.
 */
export function leaseDueAt(lease: number, graceUntil: number, now: number): number {
  if (lease > now && lease >= graceUntil) return lease;
  const look = Math.max(lease, now + GRACE_LOOK_MS);
  return graceUntil > now ? Math.min(graceUntil, look) : look;
}

/**
 * The takeover rule, whose SQL each store writes in its claim (SQLite's TAKEABLE, PostgreSQL's
 * `lost`): what it looks at for one delivery's lease. tests/store/takeover-rule.test.ts runs one
 * table of these against mayTakeOver() and against both stores' claims.
 */
export interface TakeoverFacts {
  now: number;
  leaseExpiresAt: number;
  /** The claimer's lease length: a live owner keeps a lease that ran out for this long more. */
  leaseMs: number;
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
 * handle it itself, and either its owner is gone, or the owner is live (beating) and both one
 * more lease since the lease ran out and the grace after the latest outage are over. A live owner
 * whose results waited through an outage nobody noted (a table lock on PostgreSQL, say: its beats
 * go on) thus writes them before anyone sends its deliveries again.
 */
export function mayTakeOver(facts: TakeoverFacts): boolean {
  if (facts.leaseExpiresAt > facts.now || facts.heldByClaimer) return false;
  if (ownerGone(facts)) return true;
  return facts.now >= facts.outage.graceUntil && facts.now >= facts.leaseExpiresAt + facts.leaseMs;
}
