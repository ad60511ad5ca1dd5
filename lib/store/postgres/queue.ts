import type { SQL } from "bun";
import { subscribes } from "../../webhooks/events.ts";
import { buildPayload, newMessageId } from "../../webhooks/payload.ts";
import type {
  Attempt,
  AttemptOutcome,
  Claim,
  Delivery,
  DeliveryFilter,
  DeliveryQueue,
  DeliveryState,
  Webhook,
} from "../../webhooks/types.ts";
import { CHANGE_CHANNEL } from "./changes.ts";
import { type Db, isConnectionError, toNumber, toNumberOrNull } from "./db.ts";
import { type WebhookRow, webhookFromRow } from "./webhooks.ts";

type Int8 = string | number;

interface DeliveryRow {
  id: Int8;
  webhook_id: Int8;
  message_id: string;
  event: string;
  payload: string;
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

type ListedRow = DeliveryRow & { webhook_name: string };

interface AttemptRow {
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
}

function deliveryFromRow(row: DeliveryRow, webhookName: string): Delivery {
  return {
    id: toNumber(row.id),
    webhookId: toNumber(row.webhook_id),
    webhookName,
    messageId: row.message_id,
    event: row.event,
    payload: row.payload,
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

function attemptFromRow(row: AttemptRow): Attempt {
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
  };
}

const DEFAULT_LIST_LIMIT = 50;

export interface PostgresQueueOptions {
  now?: () => number;
  /** Called when a claim starts (see ChangeListener.markSeen). */
  markSeen?: () => void;
  /** How long `finish` and `release` retry through a lost connection (database restart). */
  reconnectWaitMs?: number;
}

/**
 * The delivery queue on PostgreSQL, same behaviour as lib/store/sqlite/queue.ts. Claims lock
 * due rows with `FOR UPDATE SKIP LOCKED` in one short transaction that sets the lease, so
 * workers never wait for each other nor take the same row; `finish` and `release` apply only
 * while the claim's lease stands (state 'delivering' and the same attempt number: fencing).
 * Enqueue, retry and release NOTIFY CHANGE_CHANNEL in their transaction: listeners hear it at
 * commit, never for work that was rolled back.
 */
export function createPostgresQueue(db: Db, options: PostgresQueueOptions = {}): DeliveryQueue {
  const now = options.now ?? Date.now;
  const markSeen = options.markSeen ?? (() => {});
  const reconnectWaitMs = options.reconnectWaitMs ?? 30_000;

  function notify(sql: SQL) {
    return sql`SELECT pg_notify(${CHANGE_CHANNEL}, '')`;
  }

  /**
   * Retries a fenced write through a lost connection for a while: a worker that made an HTTP
   * attempt while the database restarted still records it. Inside a caller's transaction there
   * is nothing to retry (the transaction is gone), so errors pass through.
   */
  async function persistently<T>(fn: (retrying: boolean) => Promise<T>): Promise<T> {
    const deadline = Date.now() + reconnectWaitMs;
    let delay = 25;
    for (let retrying = false; ; retrying = true) {
      try {
        return await fn(retrying);
      } catch (error) {
        if (db.inTransaction || !isConnectionError(error) || Date.now() + delay > deadline) {
          throw error;
        }
        await Bun.sleep(delay);
        delay = Math.min(delay * 2, 1000);
      }
    }
  }

  return {
    async enqueue(change, enqueueOptions = {}) {
      const webhookId = enqueueOptions.webhookId;
      if (webhookId !== undefined && !Number.isSafeInteger(webhookId)) return [];
      return db.atomic(async (sql) => {
        const candidates =
          webhookId === undefined
            ? await sql<Array<{ id: Int8; events: string[] }>>`
                SELECT id, events FROM webhooks WHERE enabled ORDER BY id`
            : await sql<Array<{ id: Int8; events: string[] }>>`
                SELECT id, events FROM webhooks WHERE id = ${webhookId} AND enabled`;
        const targets = candidates.filter((row) =>
          change.event === "ping" ? webhookId !== undefined : subscribes(row.events, change.event),
        );
        if (targets.length === 0) return [];
        const payload = buildPayload(change);
        const t = now();
        const rows = await sql<Array<{ id: Int8 }>>`
          INSERT INTO deliveries (webhook_id, message_id, event, payload, state, attempts,
            next_attempt_at, created_at, updated_at)
          SELECT target.webhook_id, target.message_id, ${change.event}::text, ${payload}::text,
            'queued', 0, ${t}::bigint, ${t}::bigint, ${t}::bigint
          FROM unnest(${targets.map((row) => toNumber(row.id))}::bigint[],
                      ${targets.map(() => newMessageId())}::text[])
            WITH ORDINALITY AS target(webhook_id, message_id, n)
          ORDER BY target.n
          RETURNING id`;
        await notify(sql);
        return rows.map((row) => toNumber(row.id)).sort((a, b) => a - b);
      });
    },

    async claim({ workerId, limit, leaseMs, now: at }) {
      if (limit <= 0) return [];
      markSeen();
      const expires = at + leaseMs;
      return db.atomic(async (sql) => {
        // Leases that ran out: the worker holding them died. Record the lost attempt, then take
        // the delivery over (its webhook enabled) or queue it again (disabled).
        const lost = await sql<Array<DeliveryRow & { reclaimed: boolean }>>`
          WITH lost AS (
            SELECT d.id, d.attempts, d.lease_owner, d.updated_at, w.enabled,
              'Lease expired: worker ' || coalesce(d.lease_owner, '?')
                || ' did not report a result' AS error
            FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
            WHERE d.state = 'delivering' AND d.lease_expires_at <= ${at}
            ORDER BY d.lease_expires_at
            LIMIT ${limit}
            FOR UPDATE OF d SKIP LOCKED
          ), recorded AS (
            INSERT INTO attempts (delivery_id, attempt, worker_id, started_at, duration_ms,
              status_code, outcome, error)
            SELECT id, attempts, lease_owner, updated_at, greatest(0, ${at}::bigint - updated_at),
              NULL, 'lease_expired', error
            FROM lost
            ON CONFLICT (delivery_id, attempt) DO NOTHING
          )
          UPDATE deliveries d SET
            state = CASE WHEN lost.enabled THEN 'delivering' ELSE 'queued' END,
            attempts = CASE WHEN lost.enabled THEN d.attempts + 1 ELSE d.attempts END,
            lease_owner = CASE WHEN lost.enabled THEN ${workerId}::text END,
            lease_expires_at = CASE WHEN lost.enabled THEN ${expires}::bigint END,
            next_attempt_at = CASE WHEN lost.enabled THEN d.next_attempt_at ELSE ${at} END,
            last_error = lost.error,
            updated_at = ${at}
          FROM lost
          WHERE d.id = lost.id
          RETURNING d.*, lost.enabled AS reclaimed`;
        const claimed: DeliveryRow[] = lost
          .filter((row) => row.reclaimed)
          .sort((a, b) => toNumber(a.lease_expires_at ?? 0) - toNumber(b.lease_expires_at ?? 0));
        if (claimed.length < limit) {
          const due = await sql<DeliveryRow[]>`
            UPDATE deliveries d SET state = 'delivering', attempts = d.attempts + 1,
              lease_owner = ${workerId}, lease_expires_at = ${expires}, updated_at = ${at}
            FROM (
              SELECT q.id FROM deliveries q
              WHERE q.state = 'queued' AND q.next_attempt_at <= ${at}
                AND EXISTS (SELECT 1 FROM webhooks w WHERE w.id = q.webhook_id AND w.enabled)
              ORDER BY q.next_attempt_at, q.id
              LIMIT ${limit - claimed.length}
              FOR UPDATE OF q SKIP LOCKED
            ) due
            WHERE d.id = due.id
            RETURNING d.*`;
          due.sort(
            (a, b) =>
              toNumber(a.next_attempt_at) - toNumber(b.next_attempt_at) ||
              toNumber(a.id) - toNumber(b.id),
          );
          claimed.push(...due);
        }
        if (claimed.length === 0) return [];
        const webhookIds = [...new Set(claimed.map((row) => toNumber(row.webhook_id)))];
        const webhookRows = await sql<WebhookRow[]>`
          SELECT * FROM webhooks WHERE id = ANY(${webhookIds}::bigint[])`;
        const webhooks = new Map<number, Webhook>(
          webhookRows.map((row) => [toNumber(row.id), webhookFromRow(row)]),
        );
        return claimed.map((row): Claim => {
          const webhook = webhooks.get(toNumber(row.webhook_id));
          if (!webhook) throw new Error(`Delivery ${row.id} has no webhook`);
          return {
            delivery: deliveryFromRow(row, webhook.name),
            webhook,
            attempt: row.attempts,
            workerId,
          };
        });
      });
    },

    async finish(claim, record, outcome) {
      const terminal = outcome.state !== "queued";
      const next = outcome.state === "queued" ? outcome.nextAttemptAt : null;
      return persistently(async (retrying) => {
        const at = now();
        // One statement, so atomic on its own: the attempt row is written only when the
        // fenced update matched.
        const rows = await db.sql<Array<{ id: Int8 }>>`
          WITH updated AS (
            UPDATE deliveries SET state = ${outcome.state},
              next_attempt_at = coalesce(${next}::bigint, next_attempt_at),
              lease_owner = NULL, lease_expires_at = NULL,
              last_status = ${record.statusCode}, last_error = ${record.error},
              updated_at = ${at}, completed_at = ${terminal ? at : null}::bigint
            WHERE id = ${claim.delivery.id} AND state = 'delivering'
              AND attempts = ${claim.attempt}
            RETURNING id
          )
          INSERT INTO attempts (delivery_id, attempt, worker_id, started_at, duration_ms,
            status_code, outcome, error, response_headers, response_body)
          SELECT id, ${claim.attempt}::int, ${claim.workerId}::text, ${record.startedAt}::bigint,
            ${record.durationMs}::float8, ${record.statusCode}::int, ${record.outcome}::text,
            ${record.error}::text, ${record.responseHeaders}::text, ${record.responseBody}::text
          FROM updated
          RETURNING id`;
        if (rows.length > 0) {
          if (outcome.state === "queued") await notify(db.sql).catch(() => {});
          return true;
        }
        if (!retrying) return false;
        // The connection broke after an earlier try committed: our attempt row tells.
        const [mine] = await db.sql`
          SELECT 1 FROM attempts WHERE delivery_id = ${claim.delivery.id}
            AND attempt = ${claim.attempt} AND worker_id = ${claim.workerId}
            AND outcome <> 'lease_expired'`;
        return mine !== undefined;
      });
    },

    async release(claims) {
      if (claims.length === 0) return;
      await persistently(() =>
        db.atomic(async (sql) => {
          const at = now();
          const result = await sql`
            UPDATE deliveries d SET state = 'queued', attempts = d.attempts - 1,
              lease_owner = NULL, lease_expires_at = NULL, updated_at = ${at}
            FROM unnest(${claims.map((c) => c.delivery.id)}::bigint[],
                        ${claims.map((c) => c.attempt)}::int[]) AS c(id, attempt)
            WHERE d.id = c.id AND d.state = 'delivering' AND d.attempts = c.attempt`;
          if (result.count > 0) await notify(sql);
        }),
      );
    },

    async nextDueAt() {
      const [row] = await db.sql<Array<{ queued: Int8 | null; lease: Int8 | null }>>`
        SELECT
          (SELECT d.next_attempt_at FROM deliveries d
            WHERE d.state = 'queued'
              AND EXISTS (SELECT 1 FROM webhooks w WHERE w.id = d.webhook_id AND w.enabled)
            ORDER BY d.next_attempt_at LIMIT 1) AS queued,
          (SELECT d.lease_expires_at FROM deliveries d
            WHERE d.state = 'delivering'
            ORDER BY d.lease_expires_at LIMIT 1) AS lease`;
      const queued = toNumberOrNull(row?.queued ?? null);
      const lease = toNumberOrNull(row?.lease ?? null);
      if (queued === null) return lease;
      return lease === null ? queued : Math.min(queued, lease);
    },

    async list(filter: DeliveryFilter = {}) {
      const before = filter.beforeId ?? Number.MAX_SAFE_INTEGER;
      const limit = filter.limit ?? DEFAULT_LIST_LIMIT;
      const state = filter.state ?? null;
      const webhookId = filter.webhookId ?? null;
      const rows = await db.sql<ListedRow[]>`
        SELECT d.*, w.name AS webhook_name
        FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
        WHERE d.id < ${before}
          AND (${state}::text IS NULL OR d.state = ${state}::text)
          AND (${webhookId}::bigint IS NULL OR d.webhook_id = ${webhookId}::bigint)
        ORDER BY d.id DESC
        LIMIT ${limit}`;
      return rows.map((row) => deliveryFromRow(row, row.webhook_name));
    },

    async get(id) {
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
    },

    async retry(ids, at) {
      const valid = ids.filter((id) => Number.isSafeInteger(id));
      if (valid.length === 0) return 0;
      return db.atomic(async (sql) => {
        const result = await sql`
          UPDATE deliveries SET state = 'queued', next_attempt_at = ${at}, completed_at = NULL,
            updated_at = ${at}
          WHERE id = ANY(${valid}::bigint[]) AND state = 'failed'`;
        if (result.count > 0) await notify(sql);
        return result.count;
      });
    },

    async retryAllFailed(at) {
      return db.atomic(async (sql) => {
        const result = await sql`
          UPDATE deliveries SET state = 'queued', next_attempt_at = ${at}, completed_at = NULL,
            updated_at = ${at}
          WHERE state = 'failed'`;
        if (result.count > 0) await notify(sql);
        return result.count;
      });
    },

    async stats() {
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
    },

    async purge(olderThan, purgeOptions = {}) {
      const limit = purgeOptions.batchSize ?? 1000;
      let total = 0;
      for (;;) {
        // One short statement per batch so workers are never held up for long.
        const result = await db.sql`
          DELETE FROM deliveries WHERE id IN (
            SELECT id FROM deliveries
            WHERE state IN ('successful', 'failed') AND completed_at < ${olderThan}
            LIMIT ${limit})`;
        total += result.count;
        if (result.count < limit) return total;
      }
    },
  };
}
