/**
 * One clock for every process on PostgreSQL: the database's. Statements take "now" as
 * `coalesce($n, DATABASE_NOW_MS)` with the parameter bound to null, so leases, due times,
 * retries and heartbeats are stamped and compared by the server, and a process whose own clock
 * is off can neither steal leases nor hold back what it queues. Tests that drive time by hand
 * give the store a clock; its readings are bound instead.
 *
 * Times handed back to a caller that reasons with its own clock (a lease's end, a send slot, the
 * next due time) are shifted into that clock: the same distance from its "now" as from the
 * database's. The process clock thus only measures durations.
 */
export const DATABASE_NOW_MS = "(extract(epoch from now()) * 1000)::bigint";

export interface StoreClock {
  /** The caller's clock: the test clock, or this process's. Only distances from it are used. */
  callerNow(): number;
  /** Null (the database's clock), or the test clock's reading: bound as "now". */
  param(callerNow?: number): number | null;
  /** Shifts `value`, a time in the database's clock read at `databaseNow`, into the caller's. */
  toCaller(value: number, databaseNow: number, callerNow?: number): number;
  /** Shifts a time the caller computed with its own clock into the database's. */
  toDatabase(value: number, databaseNow: number, callerNow?: number): number;
}

export function storeClock(testClock?: () => number): StoreClock {
  if (testClock) {
    return {
      callerNow: testClock,
      param: (callerNow) => callerNow ?? testClock(),
      toCaller: (value) => value,
      toDatabase: (value) => value,
    };
  }
  return {
    callerNow: Date.now,
    param: () => null,
    toCaller: (value, databaseNow, callerNow = Date.now()) => value - databaseNow + callerNow,
    toDatabase: (value, databaseNow, callerNow = Date.now()) => value - callerNow + databaseNow,
  };
}
