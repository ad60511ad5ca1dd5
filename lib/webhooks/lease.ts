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
