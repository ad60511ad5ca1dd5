import type {
  Attempt,
  AttemptOutcome,
  AttemptSample,
  Delivery,
  DeliveryFilter,
  DeliveryState,
} from "../../../webhooks/model.ts";
import { type Db, toNumber } from "../db.ts";
import {
  type AttemptRow,
  attemptFromRow,
  deliveryFromRow,
  type Int8,
  type ListedRow,
} from "./rows.ts";

const DEFAULT_LIST_LIMIT = 50;

const LAST_ATTEMPT_ID_SQL = "SELECT coalesce(max(id), 0)::bigint AS id FROM attempts";
/**
 * $1 = after id, $2 = limit. Unlike SQLite, concurrent PostgreSQL transactions can commit ids
 * out of order, so an attempt committed late behind a newer id can be missed by /metrics.
 */
const ATTEMPTS_AFTER_SQL = `
  SELECT id, status_code, outcome, duration_ms FROM attempts
  WHERE id > $1 ORDER BY id LIMIT $2`;

/** Reading deliveries: listings, one delivery with its attempts, counts, attempts for /metrics. */
export function createListing(db: Db) {
  async function list(filter: DeliveryFilter = {}): Promise<Delivery[]> {
    const before = filter.beforeId ?? Number.MAX_SAFE_INTEGER;
    const limit = filter.limit ?? DEFAULT_LIST_LIMIT;
    const failing = filter.failing === true;
    const state = failing ? null : (filter.state ?? null);
    const webhookId = filter.webhookId ?? null;
    // One object's deliveries: a range of deliveries_object (a query of its own, so the plan
    // does not depend on which filters are given).
    const rows = filter.object
      ? await db.sql<ListedRow[]>`
        SELECT d.*, w.name AS webhook_name
        FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
        WHERE d.object_model = ${filter.object.model} AND d.object_id = ${filter.object.id}
          AND d.object_id IS NOT NULL AND d.id < ${before}
          AND (${state}::text IS NULL OR d.state = ${state}::text)
          AND (${webhookId}::bigint IS NULL OR d.webhook_id = ${webhookId}::bigint)
          -- DeliveryFilter.failing, as SQLite's LIST_SQL.failing
          AND (NOT ${failing}::boolean OR d.state = 'failed' OR (d.state = 'queued'
            AND d.attempts > 0 AND (d.last_status IS NULL OR d.last_status NOT BETWEEN 200 AND 299)))
        ORDER BY d.id DESC
        LIMIT ${limit}`
      : await db.sql<ListedRow[]>`
        SELECT d.*, w.name AS webhook_name
        FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
        WHERE d.id < ${before}
          AND (${state}::text IS NULL OR d.state = ${state}::text)
          AND (${webhookId}::bigint IS NULL OR d.webhook_id = ${webhookId}::bigint)
          -- DeliveryFilter.failing, as SQLite's LIST_SQL.failing
          AND (NOT ${failing}::boolean OR d.state = 'failed' OR (d.state = 'queued'
            AND d.attempts > 0 AND (d.last_status IS NULL OR d.last_status NOT BETWEEN 200 AND 299)))
        ORDER BY d.id DESC
        LIMIT ${limit}`;
    return rows.map((row) => deliveryFromRow(row, row.webhook_name));
  }

  async function get(id: number): Promise<{ delivery: Delivery; attempts: Attempt[] } | null> {
    if (!Number.isSafeInteger(id)) return null;
    const [row] = await db.sql<ListedRow[]>`
        SELECT d.*, w.name AS webhook_name
        FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
        WHERE d.id = ${id}`;
    if (!row) return null;
    const attempts = await db.sql<AttemptRow[]>`
        SELECT * FROM attempts WHERE delivery_id = ${id} ORDER BY attempt`;
    return {
      delivery: deliveryFromRow(row, row.webhook_name),
      attempts: attempts.map(attemptFromRow),
    };
  }

  async function stats(): Promise<Record<DeliveryState, number>> {
    const counts: Record<DeliveryState, number> = {
      queued: 0,
      delivering: 0,
      successful: 0,
      failed: 0,
    };
    const rows = await db.sql<Array<{ state: DeliveryState; n: number }>>`
        SELECT state, count(*)::int AS n FROM deliveries GROUP BY state`;
    for (const row of rows) counts[row.state] = row.n;
    return counts;
  }

  async function retryingCount(): Promise<number> {
    const [row] = await db.sql<Array<{ n: number }>>`
      SELECT count(*)::int AS n FROM deliveries
      WHERE state = 'queued' AND attempts > 0
        AND (last_status IS NULL OR last_status NOT BETWEEN 200 AND 299)`;
    return row?.n ?? 0;
  }

  async function lastAttemptId(): Promise<number> {
    const [row] = await db.sql.unsafe(LAST_ATTEMPT_ID_SQL);
    return Number(row?.id ?? 0);
  }

  async function attemptsAfter(afterId: number, limit: number): Promise<AttemptSample[]> {
    const rows = (await db.sql.unsafe(ATTEMPTS_AFTER_SQL, [afterId, limit])) as Array<{
      id: Int8;
      status_code: number | null;
      outcome: AttemptOutcome;
      duration_ms: number;
    }>;
    return rows.map((row) => ({
      id: toNumber(row.id),
      statusCode: row.status_code,
      outcome: row.outcome,
      durationMs: row.duration_ms,
    }));
  }

  return { list, get, stats, retryingCount, lastAttemptId, attemptsAfter };
}
