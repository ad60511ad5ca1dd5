/**
 * Whether this process saw the database come back from an outage since its last claim. The next
 * claim notes the return in `outages` before it may take any lease over, so the leases of live
 * owners get one lease of grace to write the results they held (the takeover rule, claim.ts).
 */
export interface OutageWatch {
  returned(): boolean;
  /** The claim noted it. */
  noted(): void;
}

/** Set by the reachability's "back" (the database answers again after failing). */
export function createOutageWatch(): OutageWatch & { cameBack(): void } {
  let pending = false;
  return {
    returned: () => pending,
    noted: () => {
      pending = false;
    },
    cameBack: () => {
      pending = true;
    },
  };
}
