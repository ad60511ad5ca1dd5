/**
 * A statement that waited longer than this before it ran (in a lock's queue behind `LOCK TABLE`,
 * `VACUUM FULL`, `ALTER TABLE` or a long migration) saw the database unavailable: results could
 * not be written meanwhile. A normal statement takes milliseconds. A claim statement checks it
 * itself (`clock_timestamp() - now()`: `now()` is when the statement began).
 */
export const WAITED_MS = 1000;

/**
 * Whether this process saw the database come back from an outage since its last claim. The next
 * claim notes the return in `outages` before it may take any lease over, so the leases of live
 * owners get one lease of grace to write the results they held (the takeover rule, claim.ts).
 */
export interface OutageWatch {
  returned(): boolean;
  /** The claim noted it. */
  noted(): void;
  /** The database answers again after failing, or a call waited past WAITED_MS. */
  cameBack(): void;
}

/** Set by the reachability's "back" and by queue calls that waited (timed()). */
export function createOutageWatch(): OutageWatch {
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

/**
 * `call` timed: one still waiting after WAITED_MS (a result write or a renewal queued behind a
 * table lock, say) means the database is unavailable, so this process's next claim notes the
 * outage's end before it judges any lease, as a claim that waited does itself. Marked when the
 * wait passes WAITED_MS, not when the call ends: a claim made the moment the lock goes, while this
 * call still runs, must note it too (another worker's note may not be committed yet).
 */
export function timed<A extends unknown[], T>(
  watch: Pick<OutageWatch, "cameBack">,
  call: (...args: A) => Promise<T>,
): (...args: A) => Promise<T> {
  return async (...args: A) => {
    const waiting = setTimeout(() => watch.cameBack(), WAITED_MS);
    waiting.unref?.();
    try {
      return await call(...args);
    } finally {
      clearTimeout(waiting);
    }
  };
}
