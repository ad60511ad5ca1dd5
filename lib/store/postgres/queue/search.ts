import type { Delivery, DeliverySearch, DeliveryState } from "../../../webhooks/model.ts";
import type { IdState } from "../../../webhooks/ports.ts";
import { type Db, toNumber } from "../db.ts";
import { deliveryFromRow, type Int8, type ListedRow } from "./rows.ts";

/** Failed, or queued after an attempt that was not 2XX (waiting for an automatic retry). */
const FAILING = `d.state = 'failed' OR (d.state = 'queued' AND d.attempts > 0
  AND (d.last_status IS NULL OR d.last_status NOT BETWEEN 200 AND 299))`;

/**
 * The operator's filter (the API's and the CLI's) as one WHERE clause of only the conditions
 * given ($1, $2, … in `params`), so each combination is planned for what it asks: a webhook's
 * deliveries from deliveries_webhook, an object's from deliveries_object.
 */
export function searchWhere(filter: DeliverySearch): { where: string; params: unknown[] } {
  const conditions: string[] = [];
  const params: unknown[] = [];
  const bind = (value: unknown, type: string) => `$${params.push(value)}::${type}`;
  if (filter.webhookId !== undefined) {
    conditions.push(`d.webhook_id = ${bind(filter.webhookId, "bigint")}`);
  }
  if (filter.messageId !== undefined) {
    conditions.push(`d.message_id = ${bind(filter.messageId, "text")}`);
  }
  if (filter.event !== undefined) conditions.push(`d.event = ${bind(filter.event, "text")}`);
  if (filter.objectModel !== undefined) {
    conditions.push(`d.object_model = ${bind(filter.objectModel, "text")}`);
  }
  if (filter.objectId !== undefined) {
    conditions.push(`d.object_id = ${bind(filter.objectId, "bigint")}`);
  }
  if (filter.states !== undefined) {
    conditions.push(`d.state = ANY(${bind([...filter.states], "text[]")})`);
  }
  if (filter.failing === true) conditions.push(`(${FAILING})`);
  if (filter.since !== undefined) {
    conditions.push(`d.created_at >= ${bind(filter.since, "bigint")}`);
  }
  if (filter.until !== undefined) {
    conditions.push(`d.created_at < ${bind(filter.until, "bigint")}`);
  }
  return { where: conditions.length === 0 ? "true" : conditions.join(" AND "), params };
}

/** Deliveries by the operator's filter: a page newest first with the count, or ids oldest first. */
export function createSearch(db: Db) {
  async function search(
    filter: DeliverySearch,
    page: { limit: number; offset: number; beforeId?: number },
  ): Promise<{ deliveries: Delivery[]; total: number }> {
    const { where, params } = searchWhere(filter);
    const n = params.length;
    // Keyset paging: below the last id of the page before.
    const before = page.beforeId === undefined ? "" : ` AND d.id < $${n + 3}::bigint`;
    const keyset = page.beforeId === undefined ? [] : [page.beforeId];
    // Two statements on the pool: under concurrent writes the count may differ from the page
    // by what committed in between, as any paged listing's does from one page to the next.
    const [rows, counted] = await Promise.all([
      db.sql.unsafe(
        `SELECT d.*, w.name AS webhook_name
         FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
         WHERE ${where}${before} ORDER BY d.id DESC LIMIT $${n + 1} OFFSET $${n + 2}`,
        [...params, page.limit, page.offset, ...keyset],
      ) as Promise<ListedRow[]>,
      db.sql.unsafe(
        `SELECT count(*)::bigint AS n FROM deliveries d WHERE ${where}`,
        params,
      ) as Promise<Array<{ n: Int8 }>>,
    ]);
    return {
      deliveries: rows.map((row) => deliveryFromRow(row, row.webhook_name)),
      total: toNumber(counted[0]?.n ?? 0),
    };
  }

  async function matchingIds(filter: DeliverySearch, limit: number, after = 0): Promise<number[]> {
    const { where, params } = searchWhere(filter);
    const n = params.length;
    const rows = (await db.sql.unsafe(
      `SELECT d.id FROM deliveries d WHERE ${where} AND d.id > $${n + 2}
       ORDER BY d.id LIMIT $${n + 1}`,
      [...params, limit, after],
    )) as Array<{ id: Int8 }>;
    return rows.map((row) => toNumber(row.id));
  }

  async function idStates(ids: readonly number[]): Promise<IdState[]> {
    const valid = ids.filter((id) => Number.isSafeInteger(id));
    if (valid.length === 0) return [];
    const rows = await db.sql<
      Array<{
        id: Int8;
        state: DeliveryState;
        attempts: number;
        next_attempt_at: Int8;
        template_failed: boolean;
      }>
    >`SELECT id, state, attempts, next_attempt_at, template_failed FROM deliveries
      WHERE id = ANY(${valid}::bigint[])`;
    return rows.map((row) => ({
      id: toNumber(row.id),
      state: row.state,
      attempts: Number(row.attempts),
      nextAttemptAt: toNumber(row.next_attempt_at),
      templateFailed: row.template_failed,
    }));
  }

  return { search, matchingIds, idStates };
}
