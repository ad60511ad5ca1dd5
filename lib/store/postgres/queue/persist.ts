import { abortableSleep, type Sleep } from "../../../async/sleep.ts";
import type { StoreClock } from "../clock.ts";
import { type Db, isConnectionError } from "../db.ts";

/** How a write is retried through a lost connection: for how long, on which clock, until when. */
export interface Persistence {
  /** How long to keep trying, measured on `clock`. */
  waitMs: number;
  clock: StoreClock;
  /** Aborted when the store closes: the retry gives up at once (the error is thrown). */
  signal?: AbortSignal;
  sleep?: Sleep;
}

/**
 * Retries a release or a claim's send-slot write through a lost connection for up to `waitMs`
 * of the store's clock, with an abortable pause (25 ms doubling to 1 s): a worker that gives
 * claims back while the database restarts still does. Results are not retried here: the loop
 * retries them, once, in its own layer. Inside a caller's transaction there is nothing to retry
 * (the transaction is gone), so errors pass through.
 */
export async function persistently<T>(
  db: Db,
  persistence: Persistence,
  fn: () => Promise<T>,
): Promise<T> {
  const { waitMs, clock, signal } = persistence;
  const sleep = persistence.sleep ?? abortableSleep;
  const deadline = clock.callerNow() + waitMs;
  let delay = 25;
  for (;;) {
    try {
      return await fn();
    } catch (error) {
      if (db.inTransaction || !isConnectionError(error)) throw error;
      // Known at once, so a worker stops starting requests it could not record.
      db.connectionLost?.(error);
      if (signal?.aborted || clock.callerNow() + delay > deadline) throw error;
      await sleep(delay, signal ?? new AbortController().signal);
      if (signal?.aborted) throw error;
      delay = Math.min(delay * 2, 1000);
    }
  }
}
