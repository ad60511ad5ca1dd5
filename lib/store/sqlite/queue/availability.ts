/**
 * A write (its wait for the lock included) that takes longer than this means the database was
 * unavailable meanwhile: another process held the write lock (paused by SIGSTOP, say) or this
 * one was paused holding it. A normal commit takes milliseconds.
 */
export const STALL_MS = 1000;

/**
 * The time a write reads under the lock. A store on the wall clock reads it there: a caller's
 * reading from before it waited (for the lock, or for its turn on the connection behind a
 * stalled write) would judge leases, and note an outage's end, seconds too early. A store given a
 * clock of its own (tests driving time by hand) takes the caller's reading as it is.
 */
export function clockUnderLock(testClock?: () => number): (callerNow: number) => number {
  return testClock ? (callerNow) => callerNow : () => Date.now();
}

/**
 * What this process saw of the database's availability, for the takeover rule (claim.ts
 * TAKEABLE): a write that could not be made (the disk full, the lock held past busy_timeout) or stalled
 * means an outage ended when the next claim runs, which notes it first so the leases of live
 * owners get their grace.
 */
export type AvailabilityWatch = ReturnType<typeof createAvailabilityWatch>;

export function createAvailabilityWatch(clock: () => number = () => performance.now()) {
  let unavailableSeen = false;
  return {
    /** Runs a write transaction; `started` is when it began waiting for the lock. */
    write<T>(fn: (started: number) => T): T {
      const started = clock();
      try {
        return fn(started);
      } catch (error) {
        // Only a database that could not be written ends an outage; a statement that failed for
        // its own reason would otherwise hold every expired lease for a grace it does not need.
        if (isUnavailable(error)) unavailableSeen = true;
        throw error;
      } finally {
        if (clock() - started > STALL_MS) unavailableSeen = true;
      }
    },
    /**
     * Async writes (a repository's method, a transaction): seen as `write` sees them, by the time
     * their promise takes to settle (a SQLite call's work is synchronous, so that is its wait).
     */
    async watch<T>(fn: () => Promise<T>): Promise<T> {
      const started = clock();
      try {
        return await fn();
      } catch (error) {
        if (isUnavailable(error)) unavailableSeen = true;
        throw error;
      } finally {
        if (clock() - started > STALL_MS) unavailableSeen = true;
      }
    },
    /** Inside a claim's transaction: whether an outage ended since the last claim noted one. */
    returned(started: number): boolean {
      return unavailableSeen || clock() - started > STALL_MS;
    },
    /** The claim noted the return (its transaction committed). */
    noted(): void {
      unavailableSeen = false;
    },
  };
}

/**
 * Errors that say the database could not be written at all (lock held past busy_timeout, disk
 * full, I/O), rather than that a statement failed: retrying the batch item by item won't help.
 */
export function isUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return (
    typeof code === "string" && /^SQLITE_(BUSY|LOCKED|FULL|IOERR|READONLY|CANTOPEN)/.test(code)
  );
}
