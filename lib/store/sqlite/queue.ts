import type { Database, SQLQueryBindings, Statement } from "bun:sqlite";
import { subscribes } from "../../webhooks/events.ts";
import type {
  Attempt,
  AttemptOutcome,
  AttemptRecord,
  ChangeEvent,
  Claim,
  Delivery,
  DeliveryFilter,
  DeliveryState,
  Outcome,
  Webhook,
} from "../../webhooks/model.ts";
import { buildPayload, newMessageId } from "../../webhooks/payload.ts";
import { RATE_HORIZON_MS } from "../../webhooks/policy/rate-limit.ts";
import type { DeliveryQueue } from "../../webhooks/ports.ts";
import type { ChangeTracker } from "./changes.ts";
import { attemptsAfter, dueSummary, lastAttemptId } from "./metrics.ts";
import { admitBySendRate, NEXT_QUEUED_DUE_SQLITE, SENDABLE_WEBHOOK_SQLITE } from "./rate-limit.ts";
import { purgeBatch } from "./retention.ts";
import { type WebhookRow, webhookFromRow } from "./webhooks.ts";

interface DeliveryRow {
  id: number;
  webhook_id: number;
  message_id: string;
  event: string;
  payload: string;
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

type ListedRow = DeliveryRow & { webhook_name: string };

interface AttemptRow {
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
}

type Params = Record<string, string | number | null>;

function attempt<T>(fn: () => T): T | Error {
  try {
    return fn();
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

function deliveryFromRow(row: DeliveryRow, webhookName: string): Delivery {
  return {
    id: row.id,
    webhookId: row.webhook_id,
    webhookName,
    messageId: row.message_id,
    event: row.event,
    payload: row.payload,
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

function attemptFromRow(row: AttemptRow): Attempt {
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
  };
}

/** Enabled, not paused (429/503) and with a send slot within the horizon (rate limit). */
const SENDABLE = `EXISTS (SELECT 1 FROM webhooks w WHERE w.id = d.webhook_id AND w.enabled = 1
  AND ${SENDABLE_WEBHOOK_SQLITE})`;
const DEFAULT_LIST_LIMIT = 50;
const MAX_ROWS_PER_INSERT = 32;

/**
 * The hot queries, exported so a test can check their plans. Each names its partial index with
 * INDEXED BY: on a large queue the planner may otherwise pick `deliveries_state (state, id)` and
 * sort, which reads the whole queue on every claim (REFERENCE §7: throughput halved).
 */
export const CLAIM_SQL = {
  anyDue: `SELECT 1 AS due FROM deliveries d INDEXED BY deliveries_due
     WHERE d.state = 'queued' AND d.next_attempt_at <= $now LIMIT 1`,
  anyExpiredLease: `SELECT 1 AS expired FROM deliveries d INDEXED BY deliveries_leased
     WHERE d.state = 'delivering' AND d.lease_expires_at <= $now LIMIT 1`,
  expiredLeases: `SELECT d.*, (SELECT w.enabled FROM webhooks w WHERE w.id = d.webhook_id) AS enabled
     FROM deliveries d INDEXED BY deliveries_leased
     WHERE d.state = 'delivering' AND d.lease_expires_at <= $now
     ORDER BY d.lease_expires_at LIMIT $limit`,
  /** The due deliveries a claim takes, oldest first; leaseDue() then leases them by id. */
  claimDue: `SELECT d.* FROM deliveries d INDEXED BY deliveries_due
     WHERE d.state = 'queued' AND d.next_attempt_at <= $now AND ${SENDABLE}
     ORDER BY d.next_attempt_at LIMIT $limit`,
  /** ?1 = RATE_HORIZON_MS: a paused or rate-limited webhook's backlog is due when it may send. */
  nextQueued: NEXT_QUEUED_DUE_SQLITE,
  nextLease: `SELECT d.lease_expires_at AS t FROM deliveries d INDEXED BY deliveries_leased
     WHERE d.state = 'delivering'
     ORDER BY d.lease_expires_at LIMIT 1`,
} as const;

const LIST_SELECT = `SELECT d.*, w.name AS webhook_name
  FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id`;

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
 * queued, delivering and failed rows are read from the partial indexes that hold them, and
 * successful rows, most of the table, from the table backwards from $before. Counts come from
 * the same partial indexes and the narrowest full index; successful is the rest.
 */
export const LIST_SQL = {
  byState: {
    queued: newestIn("deliveries_due", "queued"),
    delivering: newestIn("deliveries_leased", "delivering"),
    failed: newestIn("deliveries_failed", "failed"),
    successful: `${LIST_SELECT} WHERE d.state = 'successful' AND d.id < $before
      ORDER BY d.id DESC LIMIT $limit`,
  } satisfies Record<DeliveryState, string>,
  stats: `SELECT
      (SELECT count(*) FROM deliveries INDEXED BY deliveries_due WHERE state = 'queued') AS queued,
      (SELECT count(*) FROM deliveries INDEXED BY deliveries_leased
       WHERE state = 'delivering') AS delivering,
      (SELECT count(*) FROM deliveries INDEXED BY deliveries_failed WHERE state = 'failed') AS failed,
      (SELECT count(*) FROM deliveries) AS total`,
} as const;

/**
 * The delivery queue on SQLite. Every write is one `BEGIN IMMEDIATE` transaction (a savepoint
 * when the caller already opened one, so enqueue joins the caller's transaction).
 */
export interface FinishItem {
  claim: Claim;
  record: AttemptRecord;
  outcome: Outcome;
}

export type ClaimOptions = Parameters<DeliveryQueue["claim"]>[0];

/**
 * The queue plus synchronous batch operations, so the store can group the writes of one turn
 * of the event loop (results and the claims that refill the freed slots) into one transaction.
 */
export interface SqliteQueue extends DeliveryQueue {
  /** Claims and finishes in one transaction, each in a savepoint: per request, its result or error. */
  writeBatch(
    finishes: FinishItem[],
    claims: ClaimOptions[],
  ): { finished: Array<boolean | Error>; claimed: Array<Claim[] | Error> };
}

export function createSqliteQueue(
  db: Database,
  options: { now?: () => number; changes?: ChangeTracker } = {},
): SqliteQueue {
  const now = options.now ?? Date.now;
  const changes = options.changes ?? { markSeen() {}, notifyLocal() {} };

  const enabledTargetsStmt = db.prepare<{ id: number; events: string }, []>(
    "SELECT id, events FROM webhooks WHERE enabled = 1 ORDER BY id",
  );
  const targetStmt = db.prepare<{ id: number; events: string; enabled: number }, [number]>(
    "SELECT id, events, enabled FROM webhooks WHERE id = ?",
  );
  const webhookStmt = db.prepare<WebhookRow, [number]>("SELECT * FROM webhooks WHERE id = ?");
  // One INSERT for all the rows of a change (payload and time bound once), prepared per count.
  const insertStmts = new Map<number, Statement<{ id: number }, SQLQueryBindings[]>>();
  function insertDeliveriesStmt(count: number) {
    let stmt = insertStmts.get(count);
    if (!stmt) {
      const rows = Array.from(
        { length: count },
        (_, i) => `(?${4 + 2 * i}, ?${5 + 2 * i}, ?1, ?2, 'queued', 0, ?3, ?3, ?3)`,
      );
      stmt = db.prepare(
        `INSERT INTO deliveries (webhook_id, message_id, event, payload, state, attempts,
           next_attempt_at, created_at, updated_at)
         VALUES ${rows.join(", ")}
         RETURNING id`,
      );
      insertStmts.set(count, stmt);
    }
    return stmt;
  }
  const subscriptions = new Map<string, string[]>();
  function subscribed(events: string, event: string): boolean {
    let list = subscriptions.get(events);
    if (!list) {
      list = JSON.parse(events) as string[];
      if (subscriptions.size >= 1000) subscriptions.clear();
      subscriptions.set(events, list);
    }
    return subscribes(list, event);
  }

  const anyDueStmt = db.prepare<{ due: number }, Params>(CLAIM_SQL.anyDue);
  const anyExpiredLeaseStmt = db.prepare<{ expired: number }, Params>(CLAIM_SQL.anyExpiredLease);
  const expiredLeasesStmt = db.prepare<DeliveryRow & { enabled: number }, Params>(
    CLAIM_SQL.expiredLeases,
  );
  const lostAttemptStmt = db.prepare<unknown, Params>(
    `INSERT OR IGNORE INTO attempts (delivery_id, attempt, worker_id, started_at, duration_ms,
       status_code, outcome, error)
     VALUES ($id, $attempt, $worker_id, $started_at, $duration_ms, NULL, 'lease_expired', $error)`,
  );
  const requeueLostStmt = db.prepare<unknown, Params>(
    `UPDATE deliveries SET state = 'queued', lease_owner = NULL, lease_expires_at = NULL,
       next_attempt_at = $now, last_error = $error, updated_at = $now
     WHERE id = $id AND state = 'delivering' AND attempts = $attempt`,
  );
  const reclaimStmt = db.prepare<DeliveryRow, Params>(
    `UPDATE deliveries SET attempts = attempts + 1, lease_owner = $worker,
       lease_expires_at = $expires, last_error = $error, updated_at = $now
     WHERE id = $id AND state = 'delivering' AND attempts = $attempt
     RETURNING *`,
  );
  const claimDueStmt = db.prepare<DeliveryRow, Params>(CLAIM_SQL.claimDue);
  // Read, then leased by id, inside the claim's write transaction: a quarter cheaper than one
  // UPDATE … WHERE id IN (SELECT …) RETURNING *, whose RETURNING goes through a temporary table.
  const leaseStmts = new Map<number, Statement<unknown, SQLQueryBindings[]>>();
  function leaseDue(rows: DeliveryRow[], workerId: string, expires: number, at: number): void {
    if (rows.length === 0) return;
    let stmt = leaseStmts.get(rows.length);
    if (!stmt) {
      const ids = rows.map((_, i) => `?${i + 4}`).join(", ");
      stmt = db.prepare(
        `UPDATE deliveries SET state = 'delivering', attempts = attempts + 1, lease_owner = ?1,
           lease_expires_at = ?2, updated_at = ?3
         WHERE state = 'queued' AND id IN (${ids})`,
      );
      leaseStmts.set(rows.length, stmt);
    }
    const changed = stmt.run(workerId, expires, at, ...rows.map((row) => row.id)).changes;
    if (changed !== rows.length) throw new Error("A claimed delivery changed under the write lock");
    for (const row of rows) {
      row.state = "delivering";
      row.attempts += 1;
      row.lease_owner = workerId;
      row.lease_expires_at = expires;
      row.updated_at = at;
    }
  }

  // Numbered parameters: run once or twice per delivery, binding an array is cheaper than an
  // object of names (about 1 µs per delivery).
  const finishStmt = db.prepare<unknown, SQLQueryBindings[]>(
    `UPDATE deliveries SET state = ?3, next_attempt_at = coalesce(?4, next_attempt_at),
       lease_owner = NULL, lease_expires_at = NULL, last_status = ?5, last_error = ?6,
       updated_at = ?7, completed_at = ?8
     WHERE id = ?1 AND state = 'delivering' AND attempts = ?2`,
  );
  const insertAttemptStmt = db.prepare<unknown, SQLQueryBindings[]>(
    `INSERT INTO attempts (delivery_id, attempt, worker_id, started_at, duration_ms, status_code,
       outcome, error, response_headers, response_body)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)`,
  );
  const releaseStmt = db.prepare<unknown, Params>(
    `UPDATE deliveries SET state = 'queued', attempts = attempts - 1, lease_owner = NULL,
       lease_expires_at = NULL, updated_at = $now
     WHERE id = $id AND state = 'delivering' AND attempts = $attempt`,
  );

  const nextQueuedStmt = db.prepare<{ t: number | null }, [number]>(CLAIM_SQL.nextQueued);
  const nextLeaseStmt = db.prepare<{ t: number }, []>(CLAIM_SQL.nextLease);

  const listSelect = LIST_SELECT;
  const listStmts = {
    all: db.prepare<ListedRow, Params>(
      `${listSelect} WHERE d.id < $before ORDER BY d.id DESC LIMIT $limit`,
    ),
    byState: {
      queued: db.prepare<ListedRow, Params>(LIST_SQL.byState.queued),
      delivering: db.prepare<ListedRow, Params>(LIST_SQL.byState.delivering),
      failed: db.prepare<ListedRow, Params>(LIST_SQL.byState.failed),
      successful: db.prepare<ListedRow, Params>(LIST_SQL.byState.successful),
    },
    byWebhook: db.prepare<ListedRow, Params>(
      `${listSelect} WHERE d.webhook_id = $webhook AND d.id < $before
       ORDER BY d.id DESC LIMIT $limit`,
    ),
    byBoth: db.prepare<ListedRow, Params>(
      `${listSelect} WHERE d.webhook_id = $webhook AND d.state = $state AND d.id < $before
       ORDER BY d.id DESC LIMIT $limit`,
    ),
  };
  const getStmt = db.prepare<ListedRow, [number]>(`${listSelect} WHERE d.id = ?`);
  const attemptsStmt = db.prepare<AttemptRow, [number]>(
    "SELECT * FROM attempts WHERE delivery_id = ? ORDER BY attempt",
  );
  const retryStmt = db.prepare<unknown, Params>(
    `UPDATE deliveries SET state = 'queued', next_attempt_at = $now, completed_at = NULL,
       updated_at = $now
     WHERE id = $id AND state = 'failed'`,
  );
  const retryAllStmt = db.prepare<unknown, Params>(
    `UPDATE deliveries SET state = 'queued', next_attempt_at = $now, completed_at = NULL,
       updated_at = $now
     WHERE state = 'failed'`,
  );
  const statsStmt = db.prepare<Record<"queued" | "delivering" | "failed" | "total", number>, []>(
    LIST_SQL.stats,
  );
  const purgeStmt = db.prepare<unknown, Params>(
    `DELETE FROM deliveries WHERE id IN (
       SELECT id FROM deliveries INDEXED BY deliveries_completed
       WHERE state IN ('successful', 'failed') AND completed_at < $before
       LIMIT $limit)`,
  );

  const enqueueTx = db.transaction((change: ChangeEvent, webhookId: number | undefined) => {
    let targets: number[];
    if (webhookId === undefined) {
      targets = [];
      for (const row of enabledTargetsStmt.all()) {
        if (subscribed(row.events, change.event)) targets.push(row.id);
      }
    } else {
      // One webhook ("Send test" queues a ping for it alone), if it is enabled.
      const row = targetStmt.get(webhookId);
      const wanted =
        row?.enabled === 1 && (change.event === "ping" || subscribed(row.events, change.event));
      targets = wanted ? [webhookId] : [];
    }
    if (targets.length === 0) return [];
    const payload = buildPayload(change);
    const t = now();
    const ids: number[] = [];
    for (let start = 0; start < targets.length; start += MAX_ROWS_PER_INSERT) {
      const chunk = targets.slice(start, start + MAX_ROWS_PER_INSERT);
      const values: SQLQueryBindings[] = [change.event, payload, t];
      for (const id of chunk) values.push(id, newMessageId(undefined, t));
      const rows = insertDeliveriesStmt(chunk.length).all(...values);
      if (rows.length !== chunk.length) throw new Error("Inserting deliveries returned no ids");
      for (const row of rows) ids.push(row.id);
    }
    return ids.sort((a, b) => a - b);
  });

  function claimRows(workerId: string, limit: number, leaseMs: number, at: number): Claim[] {
    changes.markSeen();
    const expires = at + leaseMs;
    const claimed: DeliveryRow[] = [];
    // The covering probe costs a tenth of the full query, and almost always finds nothing.
    const lostLeases = anyExpiredLeaseStmt.get({ now: at })
      ? expiredLeasesStmt.all({ now: at, limit })
      : [];
    for (const lost of lostLeases) {
      const error = `Lease expired: worker ${lost.lease_owner ?? "?"} did not report a result (the request may not have been sent)`;
      lostAttemptStmt.run({
        id: lost.id,
        attempt: lost.attempts,
        worker_id: lost.lease_owner,
        started_at: lost.updated_at,
        duration_ms: Math.max(0, at - lost.updated_at),
        error,
      });
      const params = { id: lost.id, attempt: lost.attempts, now: at, error };
      if (lost.enabled !== 1) {
        requeueLostStmt.run(params);
        continue;
      }
      const row = reclaimStmt.get({ ...params, worker: workerId, expires });
      if (row) claimed.push(row);
    }
    const webhookRows = new Map<number, WebhookRow>();
    const webhookRowOf = (row: DeliveryRow): WebhookRow => {
      let webhookRow = webhookRows.get(row.webhook_id);
      if (!webhookRow) {
        webhookRow = webhookStmt.get(row.webhook_id) ?? undefined;
        if (!webhookRow) throw new Error(`Delivery ${row.id} has no webhook`);
        webhookRows.set(row.webhook_id, webhookRow);
      }
      return webhookRow;
    };
    const notBefore = new Map<number, number>();
    if (claimed.length < limit) {
      const due = claimDueStmt.all({
        now: at,
        limit: limit - claimed.length,
        horizon: RATE_HORIZON_MS,
      });
      // Without a rate limit a delivery only waits for the end of a 429/503 pause (within the
      // horizon, or the claim would not have taken it). Rate-limited webhooks reserve send
      // slots shared by every worker in their row (this transaction holds the write lock);
      // rows over the rate are not leased.
      const leased: DeliveryRow[] = [];
      const limited: Array<{ row: DeliveryRow; webhookId: number }> = [];
      for (const row of due) {
        const gate = webhookRowOf(row);
        if (gate.max_per_second !== null && gate.max_per_second > 0) {
          limited.push({ row, webhookId: row.webhook_id });
          continue;
        }
        leased.push(row);
        const slot = Math.max(gate.paused_until, gate.next_send_at);
        if (slot > at) notBefore.set(row.id, slot);
      }
      if (limited.length > 0) {
        const { admitted } = admitBySendRate(db, limited, { now: at });
        for (const { candidate, notBefore: slot } of admitted) {
          leased.push(candidate.row);
          if (slot > at) notBefore.set(candidate.row.id, slot);
        }
      }
      leaseDue(leased, workerId, expires, at);
      claimed.push(...leased);
    }
    const webhooks = new Map<number, Webhook>();
    return claimed.map((row): Claim => {
      let webhook = webhooks.get(row.webhook_id);
      if (!webhook) {
        webhook = webhookFromRow(webhookRowOf(row));
        webhooks.set(webhook.id, webhook);
      }
      const slot = notBefore.get(row.id);
      return {
        delivery: deliveryFromRow(row, webhook.name),
        webhook,
        attempt: row.attempts,
        workerId,
        ...(slot === undefined ? {} : { notBefore: slot }),
      };
    });
  }
  const claimTx = db.transaction(claimRows);

  /** Whether a claim at `at` could find anything; marks the database as seen, as a claim does. */
  function claimable(at: number): boolean {
    changes.markSeen();
    return anyDueStmt.get({ now: at }) !== null || anyExpiredLeaseStmt.get({ now: at }) !== null;
  }

  function finishRow(claim: Claim, record: AttemptRecord, outcome: Outcome, at: number): boolean {
    const queued = outcome.state === "queued";
    const updated = finishStmt.run(
      claim.delivery.id,
      claim.attempt,
      outcome.state,
      queued ? outcome.nextAttemptAt : null,
      record.statusCode,
      record.error,
      at,
      queued ? null : at,
    );
    // Fencing: another worker took the delivery over (or it was released); write nothing.
    if (updated.changes === 0) return false;
    insertAttemptStmt.run(
      claim.delivery.id,
      claim.attempt,
      claim.workerId,
      record.startedAt,
      record.durationMs,
      record.statusCode,
      record.outcome,
      record.error,
      record.responseHeaders,
      record.responseBody,
    );
    return true;
  }
  const finishTx = db.transaction(finishRow);

  // Group commit: a commit costs far more than the statements in it, so the results and claims
  // of one turn share a transaction. Results first: the claims then see what they free. If any
  // statement fails, the batch is rolled back and redone with a savepoint per request, so one
  // failure undoes only itself.
  const writeBatchFastTx = db.transaction((finishes: FinishItem[], claims: ClaimOptions[]) => {
    const at = now();
    return {
      finished: finishes.map((item): boolean | Error =>
        finishRow(item.claim, item.record, item.outcome, at),
      ),
      claimed: claims.map((c): Claim[] | Error =>
        c.limit > 0 ? claimRows(c.workerId, c.limit, c.leaseMs, c.now) : [],
      ),
    };
  });
  const writeBatchTx = db.transaction((finishes: FinishItem[], claims: ClaimOptions[]) => {
    const at = now();
    const finished = finishes.map((item) =>
      attempt(() => finishTx(item.claim, item.record, item.outcome, at)),
    );
    const claimed = claims.map((c) =>
      attempt(() => (c.limit > 0 ? claimTx(c.workerId, c.limit, c.leaseMs, c.now) : [])),
    );
    return { finished, claimed };
  });

  const releaseTx = db.transaction((claims: Claim[], at: number): number => {
    let released = 0;
    for (const claim of claims) {
      released += releaseStmt.run({
        id: claim.delivery.id,
        attempt: claim.attempt,
        now: at,
      }).changes;
    }
    return released;
  });

  // Single-statement writes too run in BEGIN IMMEDIATE: a deferred write that has to upgrade
  // its read snapshot fails at once with SQLITE_BUSY instead of waiting (REFERENCE §5).
  const retryAllTx = db.transaction((at: number) => retryAllStmt.run({ now: at }).changes);
  const purgeTx = db.transaction(
    (before: number, limit: number) => purgeStmt.run({ before, limit }).changes,
  );

  const retryTx = db.transaction((ids: number[], at: number): number => {
    let changed = 0;
    for (const id of ids) changed += retryStmt.run({ id, now: at }).changes;
    return changed;
  });

  return {
    async enqueue(change, enqueueOptions = {}) {
      const ids = enqueueTx.immediate(change, enqueueOptions.webhookId);
      if (ids.length > 0) changes.notifyLocal();
      return ids;
    },

    async claim({ workerId, limit, leaseMs, now: at }) {
      if (limit <= 0) return [];
      return claimTx.immediate(workerId, limit, leaseMs, at);
    },

    async finish(claim, record, outcome) {
      const applied = finishTx.immediate(claim, record, outcome, now());
      if (applied && outcome.state === "queued") changes.notifyLocal();
      return applied;
    },

    writeBatch(finishes, claims) {
      // Claims alone and nothing due (a commit elsewhere woke an idle worker): two index probes
      // instead of taking the write lock, which every other writer would have to wait for.
      if (finishes.length === 0 && !claims.some((c) => c.limit > 0 && claimable(c.now))) {
        return { finished: [], claimed: claims.map(() => []) };
      }
      let result: ReturnType<typeof writeBatchTx>;
      try {
        result = writeBatchFastTx.immediate(finishes, claims);
      } catch {
        result = writeBatchTx.immediate(finishes, claims);
      }
      const requeued = result.finished.some(
        (applied, i) => applied === true && finishes[i]?.outcome.state === "queued",
      );
      if (requeued) changes.notifyLocal();
      return result;
    },

    async release(claims) {
      if (claims.length === 0) return;
      if (releaseTx.immediate(claims, now()) > 0) changes.notifyLocal();
    },

    async nextDueAt() {
      const queued = nextQueuedStmt.get(RATE_HORIZON_MS)?.t ?? undefined;
      const lease = nextLeaseStmt.get()?.t;
      if (queued === undefined) return lease ?? null;
      return lease === undefined ? queued : Math.min(queued, lease);
    },

    async list(filter: DeliveryFilter = {}) {
      const params: Params = {
        before: filter.beforeId ?? Number.MAX_SAFE_INTEGER,
        limit: filter.limit ?? DEFAULT_LIST_LIMIT,
      };
      let stmt = listStmts.all;
      if (filter.state !== undefined && filter.webhookId !== undefined) stmt = listStmts.byBoth;
      else if (filter.state !== undefined) stmt = listStmts.byState[filter.state];
      else if (filter.webhookId !== undefined) stmt = listStmts.byWebhook;
      if (filter.state !== undefined && filter.webhookId !== undefined) params.state = filter.state;
      if (filter.webhookId !== undefined) params.webhook = filter.webhookId;
      return stmt.all(params).map((row) => deliveryFromRow(row, row.webhook_name));
    },

    async get(id) {
      const row = getStmt.get(id);
      if (!row) return null;
      return {
        delivery: deliveryFromRow(row, row.webhook_name),
        attempts: attemptsStmt.all(id).map(attemptFromRow),
      };
    },

    async retry(ids, at) {
      if (ids.length === 0) return 0;
      const changed = retryTx.immediate(ids, at);
      if (changed > 0) changes.notifyLocal();
      return changed;
    },

    async retryAllFailed(at) {
      const changed = retryAllTx.immediate(at);
      if (changed > 0) changes.notifyLocal();
      return changed;
    },

    async stats() {
      // One statement: the four counts come from one snapshot.
      const row = statsStmt.get();
      const queued = row?.queued ?? 0;
      const delivering = row?.delivering ?? 0;
      const failed = row?.failed ?? 0;
      const successful = (row?.total ?? 0) - queued - delivering - failed;
      return { queued, delivering, successful, failed };
    },

    async purgeBatch(olderThan, batchSize) {
      return purgeBatch(db, olderThan, batchSize);
    },

    async dueSummary(at) {
      return dueSummary(db, at);
    },

    async lastAttemptId() {
      return lastAttemptId(db);
    },

    async attemptsAfter(afterId, limit) {
      return attemptsAfter(db, afterId, limit);
    },

    async purge(olderThan, purgeOptions = {}) {
      const limit = purgeOptions.batchSize ?? 1000;
      let total = 0;
      for (;;) {
        // One short transaction per batch so workers are never locked out for long.
        const deleted = purgeTx.immediate(olderThan, limit);
        total += deleted;
        if (deleted < limit) return total;
      }
    },
  };
}
