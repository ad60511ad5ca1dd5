import type { Database, SQLQueryBindings, Statement } from "bun:sqlite";
import type { Attempt, AttemptOutcome, Delivery, DeliveryState } from "../../../webhooks/model.ts";

/**
 * A delivery's payload, kept in a table of its own (migration 6: a row rewritten at every state
 * change stays small), as the `payload` column of a query over deliveries named `table`.
 */
export function payloadColumn(table: string): string {
  return `(SELECT p.payload FROM delivery_payloads p WHERE p.delivery_id = ${table}.id) AS payload`;
}

/** A deliveries row as bun:sqlite returns it, with its payload (payloadColumn). */
export interface DeliveryRow {
  id: number;
  webhook_id: number;
  message_id: string;
  event: string;
  /** Null only for a row written by hand without its payload row. */
  payload: string | null;
  url: string | null;
  headers: string | null;
  context: string | null;
  template_failed: number;
  /** Absent in rows read before migration (tests write older schemas). */
  render_pending?: number;
  object_model: string | null;
  object_id: number | null;
  ordered: number;
  claim_generation: number;
  state: DeliveryState;
  attempts: number;
  next_attempt_at: number;
  lease_owner: string | null;
  lease_expires_at: number | null;
  last_status: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
  completed_at: number | null;
}

export type ListedRow = DeliveryRow & { webhook_name: string };

export interface AttemptRow {
  id: number;
  delivery_id: number;
  attempt: number;
  worker_id: string | null;
  started_at: number;
  duration_ms: number;
  status_code: number | null;
  outcome: AttemptOutcome;
  error: string | null;
  response_headers: string | null;
  response_body: string | null;
  url: string | null;
}

/** Named parameters ($now, $limit, …). */
export type Params = Record<string, string | number | null>;

export function deliveryFromRow(row: DeliveryRow, webhookName: string): Delivery {
  return {
    id: row.id,
    webhookId: row.webhook_id,
    webhookName,
    messageId: row.message_id,
    event: row.event,
    payload: row.payload ?? "",
    url: row.url,
    headers: row.headers === null ? null : (JSON.parse(row.headers) as Array<[string, string]>),
    context: row.context,
    templateFailed: row.template_failed === 1,
    renderPending: row.render_pending === 1,
    objectModel: row.object_model,
    objectId: row.object_id,
    ordered: row.ordered === 1,
    state: row.state,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    leaseOwner: row.lease_owner,
    leaseExpiresAt: row.lease_expires_at,
    lastStatus: row.last_status,
    lastError: row.last_error,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    completedAt: row.completed_at,
  };
}

export function attemptFromRow(row: AttemptRow): Attempt {
  return {
    id: row.id,
    deliveryId: row.delivery_id,
    attempt: row.attempt,
    workerId: row.worker_id,
    startedAt: row.started_at,
    durationMs: row.duration_ms,
    statusCode: row.status_code,
    outcome: row.outcome,
    error: row.error,
    responseHeaders: row.response_headers,
    responseBody: row.response_body,
    url: row.url,
  };
}

/**
 * A statement whose text depends on how many rows it carries (`VALUES (…), (…)`, `IN (…)`),
 * prepared once per row count and kept.
 */
export function perRowCount<Row = unknown>(db: Database, text: (count: number) => string) {
  const stmts = new Map<number, Statement<Row, SQLQueryBindings[]>>();
  return (count: number): Statement<Row, SQLQueryBindings[]> => {
    let stmt = stmts.get(count);
    if (!stmt) {
      stmt = db.prepare<Row, SQLQueryBindings[]>(text(count));
      stmts.set(count, stmt);
    }
    return stmt;
  };
}
