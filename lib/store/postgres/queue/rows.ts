import type { Attempt, AttemptOutcome, Delivery, DeliveryState } from "../../../webhooks/model.ts";
import { toNumber, toNumberOrNull } from "../db.ts";

export type Int8 = string | number;

export interface DeliveryRow {
  id: Int8;
  webhook_id: Int8;
  message_id: string;
  event: string;
  payload: string;
  url: string | null;
  headers: Array<[string, string]> | null;
  context: string | null;
  template_failed: boolean;
  /** Absent in rows read before migration (tests write older schemas). */
  render_pending?: boolean;
  object_model: string | null;
  object_id: Int8 | null;
  ordered: boolean;
  claim_generation: number;
  state: DeliveryState;
  attempts: number;
  next_attempt_at: Int8;
  lease_owner: string | null;
  lease_expires_at: Int8 | null;
  last_status: number | null;
  last_error: string | null;
  created_at: Int8;
  updated_at: Int8;
  completed_at: Int8 | null;
}

export type ListedRow = DeliveryRow & { webhook_name: string };

export interface AttemptRow {
  id: Int8;
  delivery_id: Int8;
  attempt: number;
  worker_id: string | null;
  started_at: Int8;
  duration_ms: number;
  status_code: number | null;
  outcome: AttemptOutcome;
  error: string | null;
  response_headers: string | null;
  response_body: string | null;
  url: string | null;
}

export function deliveryFromRow(row: DeliveryRow, webhookName: string): Delivery {
  return {
    id: toNumber(row.id),
    webhookId: toNumber(row.webhook_id),
    webhookName,
    messageId: row.message_id,
    event: row.event,
    payload: row.payload,
    url: row.url,
    headers: row.headers,
    context: row.context,
    templateFailed: row.template_failed,
    renderPending: row.render_pending === true,
    objectModel: row.object_model,
    objectId: toNumberOrNull(row.object_id),
    ordered: row.ordered === true,
    state: row.state,
    attempts: row.attempts,
    nextAttemptAt: toNumber(row.next_attempt_at),
    leaseOwner: row.lease_owner,
    leaseExpiresAt: toNumberOrNull(row.lease_expires_at),
    lastStatus: row.last_status,
    lastError: row.last_error,
    createdAt: toNumber(row.created_at),
    updatedAt: toNumber(row.updated_at),
    completedAt: toNumberOrNull(row.completed_at),
  };
}

export function attemptFromRow(row: AttemptRow): Attempt {
  return {
    id: toNumber(row.id),
    deliveryId: toNumber(row.delivery_id),
    attempt: row.attempt,
    workerId: row.worker_id,
    startedAt: toNumber(row.started_at),
    durationMs: row.duration_ms,
    statusCode: row.status_code,
    outcome: row.outcome,
    error: row.error,
    responseHeaders: row.response_headers,
    responseBody: row.response_body,
    url: row.url,
  };
}
