import type { Database } from "bun:sqlite";
import type { Params } from "./rows.ts";

/** One batch of retention: terminal deliveries completed before ?1, at most ?2 of them. */
export const PURGE_BATCH_SQLITE = `
  DELETE FROM deliveries WHERE id IN (
    SELECT id FROM deliveries INDEXED BY deliveries_completed
    WHERE state IN ('successful', 'failed') AND completed_at < ?1
    LIMIT ?2)`;

/**
 * Deletes at most `batchSize` terminal deliveries completed before `olderThan` (their attempts
 * go with them: ON DELETE CASCADE) in one short BEGIN IMMEDIATE transaction.
 */
export function purgeBatch(db: Database, olderThan: number, batchSize: number): number {
  const run = db.transaction(() => db.query(PURGE_BATCH_SQLITE).run(olderThan, batchSize).changes);
  return run.immediate();
}

/**
 * Operators' writes: deliveries queued again by id (history kept), each call one set-based
 * UPDATE in one transaction. A bulk retry or replay calls them a chunk of ids at a time
 * (lib/webhooks/delivery/replay.ts), so no call holds the write lock for long.
 */
export function createMaintenance(db: Database) {
  // A failed delivery is queued again; one waiting for an automatic retry (queued after an
  // attempt, due later) is made due now: the admin's Retry sends it at once either way. One due
  // already (a template failure just rendered again, above all) is left as it is.
  const retryStmt = db.prepare<unknown, Params>(
    `UPDATE deliveries SET state = 'queued', next_attempt_at = $now, completed_at = NULL,
       updated_at = $now
     WHERE id IN (SELECT value FROM json_each($ids)) AND template_failed = 0
       AND (state = 'failed' OR (state = 'queued' AND attempts > 0 AND next_attempt_at > $now))`,
  );
  const replayStmt = db.prepare<unknown, Params>(
    `UPDATE deliveries SET state = 'queued', next_attempt_at = $now, completed_at = NULL,
       updated_at = $now
     WHERE id IN (SELECT value FROM json_each($ids)) AND state IN ('successful', 'failed')
       AND template_failed = 0`,
  );
  // Single-statement writes too run in BEGIN IMMEDIATE: a deferred write that has to upgrade
  // its read snapshot fails at once with SQLITE_BUSY instead of waiting.
  const retryTx = db.transaction(
    (ids: number[], at: number) => retryStmt.run({ ids: JSON.stringify(ids), now: at }).changes,
  );
  const replayTx = db.transaction(
    (ids: number[], at: number) => replayStmt.run({ ids: JSON.stringify(ids), now: at }).changes,
  );
  return {
    retry: (ids: number[], at: number) => (ids.length === 0 ? 0 : retryTx.immediate(ids, at)),
    replay: (ids: number[], at: number) => (ids.length === 0 ? 0 : replayTx.immediate(ids, at)),
  };
}
