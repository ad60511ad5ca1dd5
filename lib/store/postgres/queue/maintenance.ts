import type { SQL } from "bun";
import { purgeInBatches } from "../../../webhooks/delivery/purge.ts";
import { CHANGE_CHANNEL } from "../changes.ts";
import type { StoreClock } from "../clock.ts";
import type { Db } from "../db.ts";

/** Retention, one batch: $1 = older than, $2 = batch size. */
const PURGE_BATCH_SQL = `
  DELETE FROM deliveries WHERE id IN (
    SELECT id FROM deliveries
    WHERE state IN ('successful', 'failed') AND completed_at < $1
    LIMIT $2)`;

function notify(sql: SQL) {
  return sql`SELECT pg_notify(${CHANGE_CHANNEL}, '')`;
}

/**
 * Operators' writes (deliveries queued again by id, due at the database's now) and retention,
 * each its own statement. A bulk retry or replay calls them a chunk of ids at a time
 * (lib/webhooks/delivery/replay.ts), so no statement holds its rows' locks for long.
 */
export function createMaintenance(db: Db, clock: StoreClock) {
  async function retry(ids: number[], at: number): Promise<number> {
    const valid = ids.filter((id) => Number.isSafeInteger(id));
    if (valid.length === 0) return 0;
    return db.atomic(async (sql) => {
      const result = await sql`
          WITH clock AS (
            SELECT coalesce(${clock.param(at)}::bigint, (extract(epoch from now()) * 1000)::bigint) AS t
          )
          UPDATE deliveries SET state = 'queued', completed_at = NULL,
            next_attempt_at = (SELECT t FROM clock), updated_at = (SELECT t FROM clock)
          WHERE id = ANY(${valid}::bigint[]) AND NOT template_failed
            -- failed, or waiting for an automatic retry due later: due now (as SQLite's retry)
            AND (state = 'failed' OR (state = 'queued' AND attempts > 0
              AND next_attempt_at > (SELECT t FROM clock)))`;
      if (result.count > 0) await notify(sql);
      return result.count;
    });
  }

  async function replay(ids: number[], at: number): Promise<number> {
    const valid = ids.filter((id) => Number.isSafeInteger(id));
    if (valid.length === 0) return 0;
    return db.atomic(async (sql) => {
      const result = await sql`
          UPDATE deliveries SET state = 'queued', completed_at = NULL,
            next_attempt_at = coalesce(${clock.param(at)}::bigint, (extract(epoch from now()) * 1000)::bigint),
            updated_at = coalesce(${clock.param(at)}::bigint, (extract(epoch from now()) * 1000)::bigint)
          WHERE id = ANY(${valid}::bigint[]) AND state IN ('successful', 'failed')
            AND NOT template_failed`;
      if (result.count > 0) await notify(sql);
      return result.count;
    });
  }

  async function purgeBatch(olderThan: number, batchSize: number): Promise<number> {
    const result = await db.sql.unsafe(PURGE_BATCH_SQL, [olderThan, batchSize]);
    return result.count;
  }

  function purge(olderThan: number, options: { batchSize?: number } = {}): Promise<number> {
    return purgeInBatches(purgeBatch, olderThan, options.batchSize ?? 1000);
  }

  return { retry, replay, purgeBatch, purge };
}
