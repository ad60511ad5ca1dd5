import type { Database } from "bun:sqlite";
import type {
  Attempt,
  AttemptOutcome,
  AttemptSample,
  Delivery,
  DeliveryFilter,
  DeliveryState,
} from "../../../webhooks/model.ts";
import {
  type AttemptRow,
  attemptFromRow,
  deliveryFromRow,
  type ListedRow,
  type Params,
  payloadColumn,
} from "./rows.ts";

const DEFAULT_LIST_LIMIT = 50;

const LIST_SELECT = `SELECT d.*, w.name AS webhook_name, ${payloadColumn("d")}
  FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id`;

/** Optional narrowing by $webhook and by object ($model, $object); NULL leaves it out. */
const NARROWED = `AND ($webhook IS NULL OR webhook_id = $webhook)
  AND ($model IS NULL OR (object_model = $model AND object_id = $object))`;

/** The newest rows of `state` below $before, found in `index`, the partial index holding them. */
function newestIn(index: string, state: DeliveryState): string {
  return `${LIST_SELECT} WHERE d.id IN (
      SELECT id FROM deliveries INDEXED BY ${index}
      WHERE state = '${state}' AND id < $before ORDER BY id DESC LIMIT $limit)
    ORDER BY d.id DESC`;
}

/**
 * Listings by state and the counts per state, exported so a test can check their plans. There
 * is no index on (state, id) (migration 3: it cost an index write at every state change):
 * queued, delivering and failed rows are read from the partial indexes that hold them (queued
 * ones from the claim's deliveries_webhook_due since migration 9 dropped deliveries_due), and
 * successful rows, most of the table, from the table backwards from $before. Counts come from
 * the same partial indexes and the narrowest full index; successful is the rest.
 */
export const LIST_SQL = {
  byState: {
    queued: newestIn("deliveries_webhook_due", "queued"),
    delivering: newestIn("deliveries_leased", "delivering"),
    failed: newestIn("deliveries_failed", "failed"),
    successful: `${LIST_SELECT} WHERE d.state = 'successful' AND d.id < $before
      ORDER BY d.id DESC LIMIT $limit`,
  } satisfies Record<DeliveryState, string>,
  stats: `SELECT
      (SELECT count(*) FROM deliveries INDEXED BY deliveries_webhook_due
       WHERE state = 'queued') AS queued,
      (SELECT count(*) FROM deliveries INDEXED BY deliveries_leased
       WHERE state = 'delivering') AS delivering,
      (SELECT count(*) FROM deliveries INDEXED BY deliveries_failed WHERE state = 'failed') AS failed,
      (SELECT count(*) FROM deliveries) AS total`,
  /**
   * DeliveryFilter.failing: failed rows (deliveries_failed) and queued ones after an attempt
   * whose answer was not 2XX (deliveries_webhook_due), narrowed by webhook and object when given.
   */
  failing: `${LIST_SELECT} WHERE d.id IN (
      SELECT id FROM deliveries INDEXED BY deliveries_failed
      WHERE state = 'failed' AND id < $before ${NARROWED}
      UNION ALL
      SELECT id FROM deliveries INDEXED BY deliveries_webhook_due
      WHERE state = 'queued' AND attempts > 0
        AND (last_status IS NULL OR last_status NOT BETWEEN 200 AND 299)
        AND id < $before ${NARROWED}
      ORDER BY id DESC LIMIT $limit)
    ORDER BY d.id DESC`,
  /** One object's deliveries (deliveries_object), narrowed by state and webhook when given. */
  byObject: `${LIST_SELECT} WHERE d.id IN (
      SELECT id FROM deliveries INDEXED BY deliveries_object
      WHERE object_model = $model AND object_id = $object AND id < $before
        AND ($state IS NULL OR state = $state) AND ($webhook IS NULL OR webhook_id = $webhook)
      ORDER BY id DESC LIMIT $limit)
    ORDER BY d.id DESC`,
} as const;

const LAST_ATTEMPT_ID_SQL = "SELECT coalesce(max(id), 0) AS id FROM attempts";
const ATTEMPTS_AFTER_SQL = `
  SELECT id, status_code, outcome, duration_ms FROM attempts
  WHERE id > ?1 ORDER BY id LIMIT ?2`;

/** The newest attempt id (0 when none): where the app's /metrics starts counting. */
export function lastAttemptId(db: Database): number {
  return db.query<{ id: number }, []>(LAST_ATTEMPT_ID_SQL).get()?.id ?? 0;
}

/**
 * Attempts recorded after `afterId`, oldest first. With SQLite's single writer, ids commit in
 * order, so reading past the last id seen misses nothing.
 */
export function attemptsAfter(db: Database, afterId: number, limit: number): AttemptSample[] {
  return db
    .query<
      { id: number; status_code: number | null; outcome: AttemptOutcome; duration_ms: number },
      [number, number]
    >(ATTEMPTS_AFTER_SQL)
    .all(afterId, limit)
    .map((row) => ({
      id: row.id,
      statusCode: row.status_code,
      outcome: row.outcome,
      durationMs: row.duration_ms,
    }));
}

/** Reading deliveries for people: listings, one delivery with its attempts, counts. */
export function createListing(db: Database) {
  const listStmts = {
    all: db.prepare<ListedRow, Params>(
      `${LIST_SELECT} WHERE d.id < $before ORDER BY d.id DESC LIMIT $limit`,
    ),
    byState: {
      queued: db.prepare<ListedRow, Params>(LIST_SQL.byState.queued),
      delivering: db.prepare<ListedRow, Params>(LIST_SQL.byState.delivering),
      failed: db.prepare<ListedRow, Params>(LIST_SQL.byState.failed),
      successful: db.prepare<ListedRow, Params>(LIST_SQL.byState.successful),
    },
    byWebhook: db.prepare<ListedRow, Params>(
      `${LIST_SELECT} WHERE d.webhook_id = $webhook AND d.id < $before
       ORDER BY d.id DESC LIMIT $limit`,
    ),
    byObject: db.prepare<ListedRow, Params>(LIST_SQL.byObject),
    failing: db.prepare<ListedRow, Params>(LIST_SQL.failing),
    byBoth: db.prepare<ListedRow, Params>(
      `${LIST_SELECT} WHERE d.webhook_id = $webhook AND d.state = $state AND d.id < $before
       ORDER BY d.id DESC LIMIT $limit`,
    ),
  };
  const getStmt = db.prepare<ListedRow, [number]>(`${LIST_SELECT} WHERE d.id = ?`);
  const attemptsStmt = db.prepare<AttemptRow, [number]>(
    "SELECT * FROM attempts WHERE delivery_id = ? ORDER BY attempt",
  );
  const statsStmt = db.prepare<Record<"queued" | "delivering" | "failed" | "total", number>, []>(
    LIST_SQL.stats,
  );

  function list(filter: DeliveryFilter = {}): Delivery[] {
    const params: Params = {
      before: filter.beforeId ?? Number.MAX_SAFE_INTEGER,
      limit: filter.limit ?? DEFAULT_LIST_LIMIT,
    };
    if (filter.failing === true) {
      return listStmts.failing
        .all({
          ...params,
          webhook: filter.webhookId ?? null,
          model: filter.object?.model ?? null,
          object: filter.object?.id ?? null,
        })
        .map((row) => deliveryFromRow(row, row.webhook_name));
    }
    if (filter.object !== undefined) {
      return listStmts.byObject
        .all({
          ...params,
          model: filter.object.model,
          object: filter.object.id,
          state: filter.state ?? null,
          webhook: filter.webhookId ?? null,
        })
        .map((row) => deliveryFromRow(row, row.webhook_name));
    }
    let stmt = listStmts.all;
    if (filter.state !== undefined && filter.webhookId !== undefined) stmt = listStmts.byBoth;
    else if (filter.state !== undefined) stmt = listStmts.byState[filter.state];
    else if (filter.webhookId !== undefined) stmt = listStmts.byWebhook;
    if (filter.state !== undefined && filter.webhookId !== undefined) params.state = filter.state;
    if (filter.webhookId !== undefined) params.webhook = filter.webhookId;
    return stmt.all(params).map((row) => deliveryFromRow(row, row.webhook_name));
  }

  function get(id: number): { delivery: Delivery; attempts: Attempt[] } | null {
    const row = getStmt.get(id);
    if (!row) return null;
    return {
      delivery: deliveryFromRow(row, row.webhook_name),
      attempts: attemptsStmt.all(id).map(attemptFromRow),
    };
  }

  const retryingStmt = db.prepare<{ n: number }, []>(
    `SELECT count(*) AS n FROM deliveries INDEXED BY deliveries_webhook_due
     WHERE state = 'queued' AND attempts > 0
       AND (last_status IS NULL OR last_status NOT BETWEEN 200 AND 299)`,
  );

  function retryingCount(): number {
    return retryingStmt.get()?.n ?? 0;
  }

  function stats(): Record<DeliveryState, number> {
    // One statement: the four counts come from one snapshot.
    const row = statsStmt.get();
    const queued = row?.queued ?? 0;
    const delivering = row?.delivering ?? 0;
    const failed = row?.failed ?? 0;
    const successful = (row?.total ?? 0) - queued - delivering - failed;
    return { queued, delivering, successful, failed };
  }

  return { list, get, stats, retryingCount };
}
