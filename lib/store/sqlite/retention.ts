import type { Database } from "bun:sqlite";

/** One batch of retention: terminal deliveries completed before ?1, at most ?2 of them. */
export const PURGE_BATCH_SQLITE = `
  DELETE FROM deliveries WHERE id IN (
    SELECT id FROM deliveries INDEXED BY deliveries_completed
    WHERE state IN ('successful', 'failed') AND completed_at < ?1
    LIMIT ?2)`;

/**
 * Deletes at most `batchSize` terminal deliveries completed before `olderThan` (their attempts
 * go with them: ON DELETE CASCADE) in one short BEGIN IMMEDIATE transaction. The `purge` that
 * createRetention wants, so the worker yields between batches.
 */
export function purgeBatch(db: Database, olderThan: number, batchSize: number): number {
  const run = db.transaction(() => db.query(PURGE_BATCH_SQLITE).run(olderThan, batchSize).changes);
  return run.immediate();
}
