import type { SQL } from "bun";
import {
  DEFAULT_HEARTBEAT_MS,
  LEASE_EXPIRED_TEXT,
  STALE_AFTER_BEATS,
} from "../../../webhooks/delivery/lease.ts";
import type { Claim, Webhook } from "../../../webhooks/model.ts";
import {
  admitByGates,
  RATE_HORIZON_MS,
  type SendGate,
} from "../../../webhooks/policy/rate-limit.ts";
import { SHORT_ATTEMPTS } from "../../../webhooks/policy/retry-schedule.ts";
import type { DeliveryQueue } from "../../../webhooks/ports.ts";
import type { StoreClock } from "../clock.ts";
import { type Db, toNumber } from "../db.ts";
import { type WebhookRow, webhookFromRow } from "../webhooks.ts";
import { type OutageWatch, WAITED_MS } from "./outages.ts";
import { type Persistence, persistently } from "./persist.ts";
import { type DeliveryRow, deliveryFromRow, type Int8 } from "./rows.ts";

type ClaimOptions = Parameters<DeliveryQueue["claim"]>[0];

interface GateRow {
  id: Int8;
  max_per_second: number | null;
  next_send_at: number;
  paused_until: Int8;
}

/**
 * Rate-limit admission inside its own short transaction: lock the candidates' webhook rows (in
 * id order, so two claims cannot deadlock), reserve slots, write them back.
 */
const LOCK_SEND_GATES_SQL = `
  SELECT id, max_per_second, next_send_at, paused_until FROM webhooks
  WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE`;
const SET_NEXT_SEND_SQL = "UPDATE webhooks SET next_send_at = $2 WHERE id = $1";

/**
 * The claim on PostgreSQL: one statement (in a transaction of its own, so it can tell it waited
 * for its locks) that takes over expired leases (their lost attempt recorded) and leases due
 * deliveries, locking with FOR UPDATE SKIP LOCKED so workers never wait for each other nor take
 * the same row; then send slots for rate-limited webhooks, in a transaction of their own; when
 * that step fails, the rows just leased are given back unattempted.
 */
export function createClaim(
  db: Db,
  options: {
    markSeen: () => void;
    clock: StoreClock;
    /** How the send slots' transaction retries through a lost connection. */
    persistence: Persistence;
    /** Gives claims back unattempted (queued again, attempt number not consumed). */
    release: DeliveryQueue["release"];
    /** What this process saw of outages (the takeover rule's grace). */
    outages: OutageWatch;
  },
) {
  const { markSeen, clock, persistence, release, outages } = options;

  async function claim(options: ClaimOptions): Promise<Claim[]> {
    const { workerId, limit, leaseMs, now: callerNow } = options;
    if (limit <= 0) return [];
    // The cap of a lost lease, as limitOfAttempts(): the schedule's own count (retry_attempts)
    // cut by maxAttempts; short's (NULL) is maxAttempts or SHORT_ATTEMPTS. "No cap" is passed
    // as a count no delivery reaches.
    const maxAttempts = Math.min(options.maxAttempts ?? 2 ** 31 - 1, 2 ** 31 - 1);
    const shortCap = options.maxAttempts ?? SHORT_ATTEMPTS;
    markSeen();
    const param = clock.param(callerNow);
    const holding = [...(options.holding ?? [])];
    const asked = performance.now();
    // In a transaction of its own, so `now()` is its BEGIN: a statement that then waited for
    // its locks (a table lock; they are taken when it is parsed, which may be a round trip of
    // its own) is seen to have waited by the statement itself (clock_timestamp() - now()).
    const { rows, returned } = await db.atomic(async (sql) => {
      // One that waited for a connection (every one stuck behind a table lock) saw the outage
      // as surely. A test clock drives time by hand: neither wait applies.
      const waited = param === null && performance.now() - asked > WAITED_MS;
      const returned = outages.returned() || waited;
      const rows = await leaseRows(sql, {
        param,
        returned,
        leaseMs,
        shortCap,
        maxAttempts,
        workerId,
        holding,
        limit,
      });
      return { rows, returned };
    });
    if (returned) outages.noted();
    if (rows.length === 0) return [];
    const at = toNumber(rows[0]?.clock_now ?? 0);
    // Lease ends and send slots as the caller's clock reads them now (the statement may have
    // waited since the caller read it).
    const local = (t: number) => clock.toCaller(t, at);
    const webhooks = new Map<number, Webhook>();
    const leased: Claim[] = [];
    for (const row of rows) {
      const webhookId = toNumber(row.webhook_id);
      let webhook = webhooks.get(webhookId);
      if (!webhook) {
        webhook = webhookFromRow(row.webhook);
        webhooks.set(webhookId, webhook);
      }
      const delivery = deliveryFromRow(row, webhook.name);
      if (delivery.leaseExpiresAt !== null)
        delivery.leaseExpiresAt = local(delivery.leaseExpiresAt);
      leased.push({
        delivery,
        webhook,
        attempt: row.attempts,
        workerId,
        generation: row.claim_generation,
      });
    }
    let notBefore: Map<number, number | null>;
    try {
      notBefore = await admit(
        db,
        persistence,
        rows.filter((row) => row.action === "lease"),
        at,
      );
    } catch (error) {
      // The leases are committed but the caller gets no claims: give them back now, or they
      // would wait out the lease and come back with a lost attempt that was never made. Should
      // that fail too, they are taken over when the lease ends, as after a crash.
      await release(leased).catch(() => {});
      throw error;
    }
    const claims: Claim[] = [];
    for (const claim of leased) {
      const slot = notBefore.get(claim.delivery.id);
      if (slot === null) continue; // over its webhook's rate: given back
      claims.push(slot !== undefined && slot > at ? { ...claim, notBefore: local(slot) } : claim);
    }
    return claims;
  }

  return claim;
}

type LeasedRow = DeliveryRow & { action: string; webhook: WebhookRow; clock_now: Int8 };

/**
 * The claim's one statement (one short transaction of its own). `lost`: leases that ran out
 * (the worker holding them died); their lost attempt is recorded, then they are failed (the
 * attempt cap reached), taken over (webhook enabled) or queued again (disabled). `due`: queued
 * deliveries whose time has come, read webhook by webhook through deliveries_webhook_due for
 * the webhooks that can send now only, so a backlog waiting for a disabled, paused or
 * rate-limited webhook is never read. Both lock with SKIP LOCKED, so concurrent claimers never
 * wait for each other nor get the same row; taken-over deliveries go first, then the oldest
 * due. `clock`: the database's time (see clock.ts), the one every comparison and stamp uses.
 */
function leaseRows(
  sql: SQL,
  p: {
    param: number | null;
    returned: boolean;
    leaseMs: number;
    shortCap: number;
    maxAttempts: number;
    workerId: string;
    holding: number[];
    limit: number;
  },
): Promise<LeasedRow[]> {
  const { param, returned, leaseMs, shortCap, maxAttempts, workerId, holding, limit } = p;
  return sql<LeasedRow[]>`
        WITH clock AS (
          -- Read when the statement runs, after its locks: one that waited in a lock's queue
          -- (a table lock) judges leases and notes the outage's end with the time it ran.
          SELECT coalesce(${param}::bigint, (extract(epoch from clock_timestamp()) * 1000)::bigint) AS t
        ), silence AS (
          -- Nobody could write for a while (as SQLite's CLAIM_SQL.silence): no worker beat for
          -- two of its beats, and no return noted since the last beat.
          SELECT true AS silent FROM workers
          HAVING max(last_seen_at + 2 * coalesce(heartbeat_ms, ${DEFAULT_HEARTBEAT_MS}))
              < (SELECT t FROM clock)
            AND max(last_seen_at) > (SELECT back_at FROM outages WHERE id = 1)
        ), returned AS (
          -- This process saw the database come back, the workers' beats show a silence, or
          -- this statement waited (a test clock aside: it drives time by hand).
          SELECT ${returned}::boolean OR EXISTS (SELECT 1 FROM silence)
            OR (${param}::bigint IS NULL
              AND clock_timestamp() - now() > ${WAITED_MS}::int * interval '1 millisecond') AS yes
        ), came_back AS (
          -- The end of an outage seen, or the server's start (a restart is one).
          SELECT greatest(
            CASE WHEN (SELECT yes FROM returned) THEN (SELECT t FROM clock) ELSE 0 END,
            CASE WHEN ${param}::bigint IS NULL
              THEN (extract(epoch from pg_postmaster_start_time()) * 1000)::bigint
              ELSE 0 END) AS t
        ), outage AS (
          SELECT greatest(o.back_at, b.t) AS back_at,
            greatest(o.grace_until, CASE WHEN b.t > 0 THEN b.t + ${leaseMs}::bigint ELSE 0 END)
              AS grace_until
          FROM outages o CROSS JOIN came_back b WHERE o.id = 1
        ), noted AS (
          UPDATE outages SET back_at = u.back_at, grace_until = u.grace_until
          FROM outage u WHERE outages.id = 1 AND (SELECT yes FROM returned)
        ), lost AS (
          SELECT d.id, d.webhook_id, d.attempts, d.lease_owner, d.updated_at, d.lease_expires_at,
            w.enabled,
            CASE WHEN w.retry_attempts IS NULL THEN ${shortCap}::int
              ELSE least(w.retry_attempts, ${maxAttempts}::int) END AS cap,
            ${LEASE_EXPIRED_TEXT.before}::text || coalesce(d.lease_owner, '?')
              || ${LEASE_EXPIRED_TEXT.after}::text AS error
          FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
          WHERE d.state = 'delivering' AND d.lease_expires_at <= (SELECT t FROM clock)
            -- Not what the claimer itself still handles (its result is on its way).
            AND NOT (d.lease_owner = ${workerId} AND d.id = ANY(${holding}::bigint[]))
            -- The takeover rule (mayTakeOver in webhooks/lease.ts, as SQLite's TAKEABLE): its
            -- owner gone, or one more lease and the grace after the latest outage over.
            AND (((SELECT t FROM clock) >= (SELECT grace_until FROM outage)
                AND d.lease_expires_at + ${leaseMs}::bigint <= (SELECT t FROM clock))
              OR NOT EXISTS (
              SELECT 1 FROM workers o WHERE o.id = d.lease_owner
                AND GREATEST(o.last_seen_at, (SELECT back_at FROM outage))
                  + ${STALE_AFTER_BEATS}::bigint * coalesce(o.heartbeat_ms, ${DEFAULT_HEARTBEAT_MS})
                  >= (SELECT t FROM clock)))
          ORDER BY d.lease_expires_at
          LIMIT ${limit}::int
          FOR UPDATE OF d SKIP LOCKED
        ), due AS (
          SELECT q.id, q.next_attempt_at FROM webhooks w
          CROSS JOIN LATERAL (
            SELECT d.id, d.next_attempt_at FROM deliveries d
            WHERE d.webhook_id = w.id AND d.state = 'queued'
              AND d.next_attempt_at <= (SELECT t FROM clock)
              -- Not what the claimer still holds (its result written, its loop not yet told).
              AND NOT (d.id = ANY(${holding}::bigint[]))
              -- Ordered delivery: due.ts ORDERED_READY_PG, the same text.
              AND (NOT d.ordered OR NOT EXISTS (
                SELECT 1 FROM deliveries e
                WHERE e.webhook_id = d.webhook_id AND e.object_model = d.object_model
                  AND e.object_id = d.object_id AND e.ordered
                  AND e.state IN ('queued', 'delivering') AND e.id < d.id))
            ORDER BY d.next_attempt_at
            LIMIT ${limit}::int
            FOR UPDATE OF d SKIP LOCKED) q
          WHERE w.enabled
            AND GREATEST(w.paused_until, w.next_send_at) <= (SELECT t FROM clock) + ${RATE_HORIZON_MS}::bigint
          ORDER BY q.next_attempt_at, q.id
          LIMIT ${limit}::int
        ), chosen AS (
          SELECT id, 'reclaim' AS action, error, 0 AS rank, lease_expires_at AS t
          FROM lost WHERE enabled AND attempts < cap
          UNION ALL
          SELECT id, 'lease', NULL, 1, next_attempt_at FROM due
          ORDER BY rank, t, id
          LIMIT ${limit}::int
        ), actions AS (
          SELECT id, action, error FROM chosen
          UNION ALL
          SELECT id, 'requeue', error FROM lost WHERE NOT enabled AND attempts < cap
          UNION ALL
          SELECT id, 'fail', error FROM lost WHERE attempts >= cap
        ), recorded AS (
          INSERT INTO attempts (delivery_id, attempt, worker_id, started_at, duration_ms,
            status_code, outcome, error, webhook_id)
          SELECT id, attempts, lease_owner, updated_at,
            greatest(0, (SELECT t FROM clock) - updated_at), NULL, 'lease_expired', error,
            webhook_id
          FROM lost
          ON CONFLICT (delivery_id, attempt) DO NOTHING
        ), updated AS (
          UPDATE deliveries d SET
            state = CASE a.action WHEN 'requeue' THEN 'queued' WHEN 'fail' THEN 'failed'
              ELSE 'delivering' END,
            attempts = CASE WHEN a.action IN ('requeue', 'fail') THEN d.attempts
              ELSE d.attempts + 1 END,
            claim_generation = CASE WHEN a.action IN ('requeue', 'fail') THEN d.claim_generation
              ELSE d.claim_generation + 1 END,
            lease_owner = CASE WHEN a.action IN ('requeue', 'fail') THEN NULL
              ELSE ${workerId}::text END,
            lease_expires_at = CASE WHEN a.action IN ('requeue', 'fail') THEN NULL
              ELSE (SELECT t FROM clock) + ${leaseMs}::bigint END,
            next_attempt_at = CASE a.action WHEN 'requeue' THEN (SELECT t FROM clock)
              ELSE d.next_attempt_at END,
            last_error = CASE a.action WHEN 'lease' THEN d.last_error ELSE a.error END,
            completed_at = CASE a.action WHEN 'fail' THEN (SELECT t FROM clock) ELSE d.completed_at END,
            updated_at = (SELECT t FROM clock)
          FROM actions a
          WHERE d.id = a.id
          RETURNING d.*, a.action
        )
        SELECT u.*, to_jsonb(w.*) AS webhook, (SELECT t FROM clock) AS clock_now
        FROM updated u JOIN webhooks w ON w.id = u.webhook_id
        WHERE u.action IN ('reclaim', 'lease')
        ORDER BY u.action DESC, u.next_attempt_at, u.id`;
}

/**
 * Send slots for freshly leased deliveries: delivery id → not before (null: refused, given
 * back unattempted). Webhooks without a rate limit need no reservation: their slot is the end
 * of a pause, read with the claim. Limited ones lock their webhook rows (in id order, so two
 * claims cannot deadlock), reserve slots shared by every worker and write the next free slot
 * back, in one short transaction.
 */
async function admit(
  db: Db,
  persistence: Persistence,
  leased: Array<DeliveryRow & { webhook: WebhookRow }>,
  at: number,
): Promise<Map<number, number | null>> {
  const result = new Map<number, number | null>();
  const limited: Array<{ row: DeliveryRow; webhookId: number }> = [];
  for (const row of leased) {
    const gate = row.webhook as WebhookRow & { paused_until?: Int8; next_send_at?: number };
    if (gate.max_per_second !== null && gate.max_per_second > 0) {
      limited.push({ row, webhookId: toNumber(row.webhook_id) });
    } else {
      const start = Math.max(Number(gate.paused_until ?? 0), Number(gate.next_send_at ?? 0));
      result.set(toNumber(row.id), Math.max(at, start));
    }
  }
  if (limited.length === 0) return result;
  await persistently(db, persistence, () =>
    db.atomic(async (sql) => {
      const ids = [...new Set(limited.map((c) => c.webhookId))];
      const rows = (await sql.unsafe(LOCK_SEND_GATES_SQL, [ids])) as GateRow[];
      const gates = new Map<number, SendGate>();
      for (const gate of rows) {
        gates.set(toNumber(gate.id), {
          maxPerSecond: gate.max_per_second,
          nextSendAt: Number(gate.next_send_at),
          pausedUntil: Number(gate.paused_until),
        });
      }
      // A webhook deleted meanwhile has no gate row: its deliveries are refused (and gone).
      const admission = admitByGates(limited, gates, { now: at });
      for (const { candidate, notBefore } of admission.admitted) {
        result.set(toNumber(candidate.row.id), notBefore);
      }
      for (const [webhookId, nextSendAt] of admission.nextSendAt) {
        await sql.unsafe(SET_NEXT_SEND_SQL, [webhookId, nextSendAt]);
      }
      const refused = admission.refused.map((c) => c.row);
      for (const row of refused) result.set(toNumber(row.id), null);
      if (refused.length > 0) {
        await sql`
          UPDATE deliveries d SET state = 'queued', attempts = d.attempts - 1,
            lease_owner = NULL, lease_expires_at = NULL, updated_at = ${at}
          FROM unnest(${refused.map((row) => toNumber(row.id))}::bigint[],
                      ${refused.map((row) => row.claim_generation)}::int[]) AS c(id, generation)
          WHERE d.id = c.id AND d.state = 'delivering' AND d.claim_generation = c.generation`;
      }
    }),
  );
  return result;
}
