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
