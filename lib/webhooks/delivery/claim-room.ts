/**
 * How much the claim feed (claim-feed.ts) claims, as pure rules over what it holds: the buffer
 * is topped up once half of its prefetch is gone, so a claim carries at least half of it, and
 * without a prefetch once a quarter of the slots are free (a claim is a write transaction of its
 * own: one per request that ends would cost a commit each).
 */
export interface ClaimRoomRule {
  /** Slots plus prefetch: the most claims in flight and held at once. */
  capacity: number;
  /** Topped up only once no more than this many are held. */
  lowWater: number;
  /** The least room worth a claim (wants()); a short claim takes any room. */
  minClaim: number;
}

export function claimRoomRule(concurrency: number, prefetch: number): ClaimRoomRule {
  return {
    capacity: concurrency + prefetch,
    lowWater: Math.floor(prefetch / 2),
    // With a prefetch, the low-water mark already makes chunks of at least half of it.
    minClaim: prefetch > 0 ? 1 : Math.max(1, Math.floor(concurrency / 4)),
  };
}

/** What the room depends on, now. */
export interface ClaimRoomState {
  /** Requests in flight. */
  inFlight: number;
  /** Claims held and not in flight (ready, set aside, being renewed). */
  held: number;
  /** Results whose write failed and is being retried: they are written before anything new is claimed. */
  resultsWaiting: number;
}

/** Claims that would fit now: none while results wait or more than the low-water mark are held. */
export function claimRoom(rule: ClaimRoomRule, state: ClaimRoomState): number {
  if (state.resultsWaiting > 0 || state.held > rule.lowWater) return 0;
  return Math.max(0, rule.capacity - state.inFlight - state.held);
}
