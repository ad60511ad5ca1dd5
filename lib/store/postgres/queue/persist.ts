import { type Db, isConnectionError } from "../db.ts";

/**
 * Retries a fenced write through a lost connection for up to `waitMs`: a worker that made an
 * HTTP attempt while the database restarted still records it. Inside a caller's transaction
 * there is nothing to retry (the transaction is gone), so errors pass through. `fn` is told
 * whether this is a retry (an earlier try may have committed).
 */
export async function persistently<T>(
  db: Db,
  waitMs: number,
  fn: (retrying: boolean) => Promise<T>,
): Promise<T> {
  const deadline = Date.now() + waitMs;
  let delay = 25;
  for (let retrying = false; ; retrying = true) {
    try {
      return await fn(retrying);
    } catch (error) {
      if (db.inTransaction || !isConnectionError(error)) throw error;
      // Known at once, so a worker stops starting requests it could not record.
      db.connectionLost?.(error);
      if (Date.now() + delay > deadline) throw error;
      await Bun.sleep(delay);
      delay = Math.min(delay * 2, 1000);
    }
  }
}
