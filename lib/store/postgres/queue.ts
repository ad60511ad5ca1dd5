import type { SQL } from "bun";
import { subscribes } from "../../webhooks/events.ts";
import type {
  Attempt,
  AttemptOutcome,
  AttemptRecord,
  AttemptSample,
  Claim,
  Delivery,
  DeliveryFilter,
  DeliveryState,
  Outcome,
  Webhook,
} from "../../webhooks/model.ts";
import { buildPayload, newMessageId } from "../../webhooks/payload.ts";
import { RATE_HORIZON_MS, reserveSlots } from "../../webhooks/policy/rate-limit.ts";
import type { DeliveryQueue } from "../../webhooks/ports.ts";
import { createBatcher } from "./batch.ts";
import { CHANGE_CHANNEL } from "./changes.ts";
import { type Db, isConnectionError, toNumber, toNumberOrNull } from "./db.ts";
import {
  ATTEMPTS_AFTER_POSTGRES,
  DUE_SUMMARY_POSTGRES,
  LAST_ATTEMPT_ID_POSTGRES,
  LOCK_SEND_GATES_POSTGRES,
  NEXT_QUEUED_DUE_POSTGRES,
  PURGE_BATCH_POSTGRES,
  SET_NEXT_SEND_POSTGRES,
} from "./ops-sql.ts";
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

interface FinishItem {
  claim: Claim;
  record: AttemptRecord;
  outcome: Outcome;
}

/**
 * Text as PostgreSQL can store it: TEXT cannot hold U+0000 (a binary response body may), nor can
 * a lone surrogate be encoded; both become U+FFFD instead of failing the whole write.
 */
export function storableText(text: string | null): string | null {
  return text === null ? null : text.toWellFormed().replaceAll("\u0000", "\uFFFD");
}

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

  /**
   * Records the attempts and applies the outcomes of several claims in one statement; each
   * applies only while its lease stands (fencing), independently of the others.
   */
  async function finishGroup(items: FinishItem[]): Promise<boolean[]> {
    const input = items.map(({ claim, record, outcome }) => ({
      id: claim.delivery.id,
      attempt: claim.attempt,
      state: outcome.state,
      next_at: outcome.state === "queued" ? outcome.nextAttemptAt : null,
      status: record.statusCode,
      error: storableText(record.error),
      worker_id: claim.workerId,
      started_at: record.startedAt,
      duration_ms: record.durationMs,
      outcome: record.outcome,
      response_headers: storableText(record.responseHeaders),
      response_body: storableText(record.responseBody),
    }));
    return persistently(async (retrying) => {
      const at = now();
      // A NOTIFY for each delivery queued for a retry, so idle workers recompute their wait.
      const rows = await db.sql<Array<{ id: Int8 }>>`
        WITH input AS (
          SELECT * FROM jsonb_to_recordset(${JSON.stringify(input)}::text::jsonb) AS f(
            id bigint, attempt int, state text, next_at bigint, status int, error text,
            worker_id text, started_at bigint, duration_ms float8, outcome text,
            response_headers text, response_body text)
        ), updated AS (
          UPDATE deliveries d SET state = f.state,
            next_attempt_at = coalesce(f.next_at, d.next_attempt_at),
            lease_owner = NULL, lease_expires_at = NULL,
            last_status = f.status, last_error = f.error, updated_at = ${at}::bigint,
            completed_at = CASE WHEN f.state = 'queued' THEN NULL ELSE ${at}::bigint END
          FROM input f
          WHERE d.id = f.id AND d.state = 'delivering' AND d.attempts = f.attempt
          RETURNING d.id
        ), recorded AS (
          INSERT INTO attempts (delivery_id, attempt, worker_id, started_at, duration_ms,
            status_code, outcome, error, response_headers, response_body)
          SELECT f.id, f.attempt, f.worker_id, f.started_at, f.duration_ms, f.status, f.outcome,
            f.error, f.response_headers, f.response_body
          FROM input f JOIN updated u ON u.id = f.id
          RETURNING delivery_id
        )
        SELECT r.delivery_id AS id,
          CASE WHEN f.state = 'queued' THEN pg_notify(${CHANGE_CHANNEL}, '') END AS notified
        FROM recorded r JOIN input f ON f.id = r.delivery_id`;
      const applied = new Set(rows.map((row) => toNumber(row.id)));
      const results = items.map((item) => applied.has(item.claim.delivery.id));
      if (!retrying || results.every(Boolean)) return results;
      // The connection broke after an earlier try committed: our attempt rows tell.
      const unsure = items.filter((_, i) => !results[i]);
      const mine = await db.sql<Array<{ id: Int8 }>>`
        SELECT a.delivery_id AS id FROM attempts a
        JOIN unnest(${unsure.map((item) => item.claim.delivery.id)}::bigint[],
                    ${unsure.map((item) => item.claim.attempt)}::int[],
                    ${unsure.map((item) => item.claim.workerId)}::text[]) AS c(id, attempt, worker)
          ON a.delivery_id = c.id AND a.attempt = c.attempt AND a.worker_id = c.worker
        WHERE a.outcome <> 'lease_expired'`;
      for (const row of mine) applied.add(toNumber(row.id));
      return items.map((item) => applied.has(item.claim.delivery.id));
    });
  }

  const grouped = createBatcher(finishGroup, { key: (item) => item.claim.delivery.id });

  /**
   * Send slots for freshly leased deliveries: delivery id → not before (null: refused, given
   * back unattempted). Webhooks without a rate limit need no reservation: their slot is the end
   * of a pause, read with the claim. Limited ones lock their webhook rows (in id order), reserve
   * slots shared by every worker and write the next free slot back, in one short transaction.
   */
  async function admitBySendRate(
    leased: Array<DeliveryRow & { webhook: WebhookRow }>,
    at: number,
  ): Promise<Map<number, number | null>> {
    const result = new Map<number, number | null>();
    const limited = new Map<number, Array<DeliveryRow & { webhook: WebhookRow }>>();
    for (const row of leased) {
      const gate = row.webhook as WebhookRow & { paused_until?: Int8; next_send_at?: number };
      if (gate.max_per_second !== null && gate.max_per_second > 0) {
        const webhookId = toNumber(row.webhook_id);
        limited.set(webhookId, [...(limited.get(webhookId) ?? []), row]);
      } else {
        const start = Math.max(Number(gate.paused_until ?? 0), Number(gate.next_send_at ?? 0));
        result.set(toNumber(row.id), Math.max(at, start));
      }
    }
    if (limited.size === 0) return result;
    await persistently(() =>
      db.atomic(async (sql) => {
        const gates = await sql.unsafe(LOCK_SEND_GATES_POSTGRES, [[...limited.keys()]]);
        const refused: Array<DeliveryRow & { webhook: WebhookRow }> = [];
        for (const gate of gates as Array<{
          id: Int8;
          max_per_second: number | null;
          next_send_at: number;
          paused_until: Int8;
        }>) {
          const group = limited.get(toNumber(gate.id)) ?? [];
          const reservation = reserveSlots(
            {
              maxPerSecond: gate.max_per_second,
              nextSendAt: Number(gate.next_send_at),
              pausedUntil: Number(gate.paused_until),
            },
            { now: at, wanted: group.length },
          );
          for (const [i, row] of group.entries()) {
            const slot = reservation.slots[i];
            result.set(toNumber(row.id), slot ?? null);
            if (slot === undefined) refused.push(row);
          }
          if (reservation.nextSendAt !== Number(gate.next_send_at)) {
            await sql.unsafe(SET_NEXT_SEND_POSTGRES, [gate.id, reservation.nextSendAt]);
          }
        }
        if (refused.length > 0) {
          await sql`
            UPDATE deliveries d SET state = 'queued', attempts = d.attempts - 1,
              lease_owner = NULL, lease_expires_at = NULL, updated_at = ${at}
            FROM unnest(${refused.map((row) => toNumber(row.id))}::bigint[],
                        ${refused.map((row) => row.attempts)}::int[]) AS c(id, attempt)
            WHERE d.id = c.id AND d.state = 'delivering' AND d.attempts = c.attempt`;
        }
      }),
    );
    // A webhook deleted meanwhile has no gate row: its deliveries are gone too.
    for (const rows of limited.values()) {
      for (const row of rows) if (!result.has(toNumber(row.id))) result.set(toNumber(row.id), null);
    }
    return result;
  }

  return {
    async enqueue(change, enqueueOptions = {}) {
      const webhookId = enqueueOptions.webhookId;
      if (webhookId !== undefined && !Number.isSafeInteger(webhookId)) return [];
      const candidates =
        webhookId === undefined
          ? await db.sql<Array<{ id: Int8; events: string[] }>>`
              SELECT id, events FROM webhooks WHERE enabled ORDER BY id`
          : await db.sql<Array<{ id: Int8; events: string[] }>>`
              SELECT id, events FROM webhooks WHERE id = ${webhookId} AND enabled`;
      const targets = candidates.filter((row) =>
        change.event === "ping" ? webhookId !== undefined : subscribes(row.events, change.event),
      );
      if (targets.length === 0) return [];
      const payload = buildPayload(change);
      const t = now();
      // One statement, so the fan-out is atomic without a transaction of its own; the join
      // drops a webhook disabled since it was read. pg_notify is sent once per transaction
      // however many rows call it, and delivered at commit (the caller's, when there is one).
      const rows = await db.sql<Array<{ id: Int8 }>>`
        WITH inserted AS (
          INSERT INTO deliveries (webhook_id, message_id, event, payload, state, attempts,
            next_attempt_at, created_at, updated_at)
          SELECT target.webhook_id, target.message_id, ${change.event}::text, ${payload}::text,
            'queued', 0, ${t}::bigint, ${t}::bigint, ${t}::bigint
          FROM unnest(${targets.map((row) => toNumber(row.id))}::bigint[],
                      ${targets.map(() => newMessageId())}::text[])
            WITH ORDINALITY AS target(webhook_id, message_id, n)
          JOIN webhooks w ON w.id = target.webhook_id AND w.enabled
          ORDER BY target.n
          RETURNING id
        )
        SELECT id, pg_notify(${CHANGE_CHANNEL}, '') AS notified FROM inserted`;
      return rows.map((row) => toNumber(row.id)).sort((a, b) => a - b);
    },

    async claim({ workerId, limit, leaseMs, now: at }) {
      if (limit <= 0) return [];
      markSeen();
      const expires = at + leaseMs;
      // One statement, hence one short transaction of its own. `lost`: leases that ran out (the
      // worker holding them died); their lost attempt is recorded, then they are taken over
      // (webhook enabled) or queued again (disabled). `due`: queued deliveries whose time has
      // come. Both lock with SKIP LOCKED, so concurrent claimers never wait for each other nor
      // get the same row; taken-over deliveries go first, then the oldest due.
      const rows = await db.sql<Array<DeliveryRow & { action: string; webhook: WebhookRow }>>`
        WITH lost AS (
          SELECT d.id, d.attempts, d.lease_owner, d.updated_at, d.lease_expires_at, w.enabled,
            'Lease expired: worker ' || coalesce(d.lease_owner, '?')
              || ' did not report a result (the request may not have been sent)' AS error
          FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
          WHERE d.state = 'delivering' AND d.lease_expires_at <= ${at}::bigint
          ORDER BY d.lease_expires_at
          LIMIT ${limit}::int
          FOR UPDATE OF d SKIP LOCKED
        ), due AS (
          SELECT q.id, q.next_attempt_at FROM deliveries q
          WHERE q.state = 'queued' AND q.next_attempt_at <= ${at}::bigint
            AND EXISTS (SELECT 1 FROM webhooks w WHERE w.id = q.webhook_id AND w.enabled
              AND GREATEST(w.paused_until, w.next_send_at)
                <= ${at}::bigint + ${RATE_HORIZON_MS}::bigint)
          ORDER BY q.next_attempt_at, q.id
          LIMIT ${limit}::int
          FOR UPDATE OF q SKIP LOCKED
        ), chosen AS (
          SELECT id, 'reclaim' AS action, error, 0 AS rank, lease_expires_at AS t
          FROM lost WHERE enabled
          UNION ALL
          SELECT id, 'lease', NULL, 1, next_attempt_at FROM due
          ORDER BY rank, t, id
          LIMIT ${limit}::int
        ), actions AS (
          SELECT id, action, error FROM chosen
          UNION ALL
          SELECT id, 'requeue', error FROM lost WHERE NOT enabled
        ), recorded AS (
          INSERT INTO attempts (delivery_id, attempt, worker_id, started_at, duration_ms,
            status_code, outcome, error)
          SELECT id, attempts, lease_owner, updated_at,
            greatest(0, ${at}::bigint - updated_at), NULL, 'lease_expired', error
          FROM lost
          ON CONFLICT (delivery_id, attempt) DO NOTHING
        ), updated AS (
          UPDATE deliveries d SET
            state = CASE a.action WHEN 'requeue' THEN 'queued' ELSE 'delivering' END,
            attempts = CASE a.action WHEN 'requeue' THEN d.attempts ELSE d.attempts + 1 END,
            lease_owner = CASE a.action WHEN 'requeue' THEN NULL ELSE ${workerId}::text END,
            lease_expires_at = CASE a.action WHEN 'requeue' THEN NULL ELSE ${expires}::bigint END,
            next_attempt_at = CASE a.action WHEN 'requeue' THEN ${at}::bigint
              ELSE d.next_attempt_at END,
            last_error = CASE a.action WHEN 'lease' THEN d.last_error ELSE a.error END,
            updated_at = ${at}::bigint
          FROM actions a
          WHERE d.id = a.id
          RETURNING d.*, a.action
        )
        SELECT u.*, to_jsonb(w.*) AS webhook
        FROM updated u JOIN webhooks w ON w.id = u.webhook_id
        WHERE u.action <> 'requeue'
        ORDER BY u.action DESC, u.next_attempt_at, u.id`;
      const notBefore = await admitBySendRate(
        rows.filter((row) => row.action === "lease"),
        at,
      );
      const webhooks = new Map<number, Webhook>();
      const claims: Claim[] = [];
      for (const row of rows) {
        const slot = notBefore.get(toNumber(row.id));
        if (slot === null) continue; // over its webhook's rate: given back
        const webhookId = toNumber(row.webhook_id);
        let webhook = webhooks.get(webhookId);
        if (!webhook) {
          webhook = webhookFromRow(row.webhook);
          webhooks.set(webhookId, webhook);
        }
        claims.push({
          delivery: deliveryFromRow(row, webhook.name),
          webhook,
          attempt: row.attempts,
          workerId,
          ...(slot !== undefined && slot > at ? { notBefore: slot } : {}),
        });
      }
      return claims;
    },

    finish(claim, record, outcome) {
      const item = { claim, record, outcome };
      // In a caller's transaction the write must be part of it; otherwise results that arrive
      // together are written together (one statement instead of one per delivery).
      return db.inTransaction
        ? finishGroup([item]).then(([applied]) => applied ?? false)
        : grouped(item);
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
      // A paused or rate-limited webhook's backlog counts from when it may send again.
      const [row] = (await db.sql.unsafe(
        `SELECT (${NEXT_QUEUED_DUE_POSTGRES}) AS queued,
          (SELECT d.lease_expires_at FROM deliveries d
            WHERE d.state = 'delivering'
            ORDER BY d.lease_expires_at LIMIT 1) AS lease`,
        [RATE_HORIZON_MS],
      )) as Array<{ queued: Int8 | null; lease: Int8 | null }>;
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

    async purgeBatch(olderThan, batchSize) {
      const result = await db.sql.unsafe(PURGE_BATCH_POSTGRES, [olderThan, batchSize]);
      return result.count;
    },

    async dueSummary(at) {
      const [row] = await db.sql.unsafe(DUE_SUMMARY_POSTGRES, [at]);
      return { count: Number(row?.n ?? 0), oldestDueAt: toNumberOrNull(row?.oldest ?? null) };
    },

    async lastAttemptId() {
      const [row] = await db.sql.unsafe(LAST_ATTEMPT_ID_POSTGRES);
      return Number(row?.id ?? 0);
    },

    async attemptsAfter(afterId, limit) {
      const rows = (await db.sql.unsafe(ATTEMPTS_AFTER_POSTGRES, [afterId, limit])) as Array<{
        id: Int8;
        status_code: number | null;
        outcome: AttemptOutcome;
        duration_ms: number;
      }>;
      return rows.map(
        (row): AttemptSample => ({
          id: toNumber(row.id),
          statusCode: row.status_code,
          outcome: row.outcome,
          durationMs: row.duration_ms,
        }),
      );
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
