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

const REPLAY_CHUNK = 500;

/** Operators' writes: failed deliveries queued again (history kept). Each one transaction. */
export function createMaintenance(db: Database) {
  // A failed delivery is queued again; one waiting for an automatic retry (queued after an
  // attempt, due later) is made due now: the admin's Retry sends it at once either way. One due
  // already (a template failure just rendered again, above all) is left as it is.
  const retryStmt = db.prepare<unknown, Params>(
    `UPDATE deliveries SET state = 'queued', next_attempt_at = $now, completed_at = NULL,
       updated_at = $now
     WHERE id = $id AND template_failed = 0
       AND (state = 'failed' OR (state = 'queued' AND attempts > 0 AND next_attempt_at > $now))`,
  );
  const retryAllStmt = db.prepare<unknown, Params>(
    `UPDATE deliveries SET state = 'queued', next_attempt_at = $now, completed_at = NULL,
       updated_at = $now
     WHERE state = 'failed' AND template_failed = 0`,
  );
  // Single-statement writes too run in BEGIN IMMEDIATE: a deferred write that has to upgrade
  // its read snapshot fails at once with SQLITE_BUSY instead of waiting.
  const retryTx = db.transaction((ids: number[], at: number): number => {
    let changed = 0;
    for (const id of ids) changed += retryStmt.run({ id, now: at }).changes;
    return changed;
  });
  const retryAllTx = db.transaction((at: number) => retryAllStmt.run({ now: at }).changes);
  const replayStmt = db.prepare<unknown, Params>(
    `UPDATE deliveries SET state = 'queued', next_attempt_at = $now, completed_at = NULL,
       updated_at = $now
     WHERE id = $id AND state IN ('successful', 'failed') AND template_failed = 0`,
  );
  const replayTx = db.transaction((ids: number[], at: number): number => {
    let changed = 0;
    for (const id of ids) changed += replayStmt.run({ id, now: at }).changes;
    return changed;
  });
  /** A replay of up to 100,000 in transactions of 500, so workers' writes get in between. */
  function replay(ids: number[], at: number): number {
    let changed = 0;
    for (let i = 0; i < ids.length; i += REPLAY_CHUNK) {
      changed += replayTx.immediate(ids.slice(i, i + REPLAY_CHUNK), at);
    }
    return changed;
  }
  return {
    retry: (ids: number[], at: number) => retryTx.immediate(ids, at),
    retryAllFailed: (at: number) => retryAllTx.immediate(at),
    replay,
  };
}
