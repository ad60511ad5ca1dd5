import type { Database } from "bun:sqlite";
import type { Delivery, DeliverySearch, DeliveryState } from "../../../webhooks/model.ts";
import type { IdState } from "../../../webhooks/ports.ts";
import { deliveryFromRow, type ListedRow, type Params, payloadColumn } from "./rows.ts";

/** Failed, or queued after an attempt that was not 2XX (waiting for an automatic retry). */
const FAILING = `d.state = 'failed' OR (d.state = 'queued' AND d.attempts > 0
  AND (d.last_status IS NULL OR d.last_status NOT BETWEEN 200 AND 299))`;

/**
 * The operator's filter (the API's and the CLI's) as one WHERE clause of only the conditions
 * given, so each combination gets a plan of its own: a webhook's deliveries come from
 * deliveries_webhook, an object's from deliveries_object, a message id's from its UNIQUE index. bun:sqlite caches each text's
 * prepared statement.
 */
export function searchWhere(filter: DeliverySearch): { where: string; params: Params } {
  const conditions: string[] = [];
  const params: Params = {};
  const equal = (column: string, name: string, value: string | number | undefined) => {
    if (value === undefined) return;
    conditions.push(`d.${column} = $${name}`);
    params[name] = value;
  };
  equal("webhook_id", "webhook", filter.webhookId);
  equal("message_id", "message", filter.messageId);
  equal("event", "event", filter.event);
  equal("object_model", "model", filter.objectModel);
  equal("object_id", "object", filter.objectId);
  if (filter.states !== undefined) {
    const names = filter.states.map((state, i) => {
      params[`s${i}`] = state;
      return `$s${i}`;
    });
    conditions.push(names.length === 0 ? "0" : `d.state IN (${names.join(", ")})`);
  }
  if (filter.failing === true) conditions.push(`(${FAILING})`);
  if (filter.since !== undefined) {
    conditions.push("d.created_at >= $since");
    params.since = filter.since;
  }
  if (filter.until !== undefined) {
    conditions.push("d.created_at < $until");
    params.until = filter.until;
  }
  return { where: conditions.length === 0 ? "1" : conditions.join(" AND "), params };
}

/** Deliveries by the operator's filter: a page newest first with the count, or ids oldest first. */
export function createSearch(db: Database) {
  function search(
    filter: DeliverySearch,
    page: { limit: number; offset: number; beforeId?: number },
  ): { deliveries: Delivery[]; total: number } {
    const { where, params } = searchWhere(filter);
    const before = page.beforeId === undefined ? "" : " AND d.id < $before";
    // One read transaction: the page and the count come from one snapshot.
    return db.transaction(() => {
      const rows = db
        .query<ListedRow, Params>(
          `SELECT d.*, w.name AS webhook_name, ${payloadColumn("d")}
           FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
           WHERE ${where}${before} ORDER BY d.id DESC LIMIT $limit OFFSET $offset`,
        )
        .all({
          ...params,
          limit: page.limit,
          offset: page.offset,
          ...(page.beforeId === undefined ? {} : { before: page.beforeId }),
        });
      const counted = db
        .query<{ n: number }, Params>(`SELECT count(*) AS n FROM deliveries d WHERE ${where}`)
        .get(params);
      return {
        deliveries: rows.map((row) => deliveryFromRow(row, row.webhook_name)),
        total: counted?.n ?? 0,
      };
    })();
  }

  function matchingIds(filter: DeliverySearch, limit: number, after = 0): number[] {
    const { where, params } = searchWhere(filter);
    return db
      .query<{ id: number }, Params>(
        `SELECT d.id FROM deliveries d WHERE ${where} AND d.id > $after ORDER BY d.id LIMIT $limit`,
      )
      .all({ ...params, limit, after })
      .map((row) => row.id);
  }

  const idStatesStmt = db.prepare<
    {
      id: number;
      state: DeliveryState;
      attempts: number;
      next_attempt_at: number;
      template_failed: number;
    },
    [string]
  >(
    `SELECT id, state, attempts, next_attempt_at, template_failed FROM deliveries
     WHERE id IN (SELECT value FROM json_each(?))`,
  );

  function idStates(ids: readonly number[]): IdState[] {
    return idStatesStmt.all(JSON.stringify(ids)).map((row) => ({
      id: row.id,
      state: row.state,
      attempts: row.attempts,
      nextAttemptAt: row.next_attempt_at,
      templateFailed: row.template_failed === 1,
    }));
  }

  return { search, matchingIds, idStates };
}
