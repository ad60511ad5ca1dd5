import type { Database } from "bun:sqlite";
import {
  DEFAULT_HEARTBEAT_MS,
  leaseExpiredMessage,
  STALE_AFTER_BEATS,
} from "../../../webhooks/delivery/lease.ts";
import type { Claim, Webhook } from "../../../webhooks/model.ts";
import {
  type Admission,
  admitByGates,
  RATE_HORIZON_MS,
  type SendGate,
} from "../../../webhooks/policy/rate-limit.ts";
import { limitOfAttempts } from "../../../webhooks/policy/retry-schedule.ts";
import type { DeliveryQueue } from "../../../webhooks/ports.ts";
import type { ChangeListener } from "../changes.ts";
import { type WebhookRow, webhookFromRow } from "../webhooks.ts";
import {
  type DeliveryRow,
  deliveryFromRow,
  type Params,
  payloadColumn,
  perRowCount,
} from "./rows.ts";

/**
 * Claim filter on the webhook row `w`: leave out webhooks that are paused, or whose next send
 * slot is beyond the horizon. Binds `$now` and `$horizon` (RATE_HORIZON_MS).
 */
export const SENDABLE_WEBHOOK_SQLITE = "max(w.paused_until, w.next_send_at) <= $now + $horizon";

/** Enabled, not paused (429/503) and with a send slot within the horizon (rate limit). */
const SENDABLE_WEBHOOKS = `SELECT w.id FROM webhooks w
  WHERE w.enabled = 1 AND ${SENDABLE_WEBHOOK_SQLITE}`;

/**
 * The hot queries, exported so a test can check their plans. The claim goes webhook by
 * webhook: due rows are read through `deliveries_webhook_due (webhook_id, next_attempt_at)` for
 * the webhooks that can send now only, so a backlog waiting for a disabled, paused or
 * rate-limited webhook costs nothing (walking the due index in time order would read all of it
 * on every claim). INDEXED BY names the partial index: on a large queue the planner may
 * otherwise pick another index and sort, which halves throughput.
 */
/**
 * An expired lease of `d` may be taken over (the one rule, both stores: mayTakeOver() in
 * webhooks/lease.ts, held to it by tests/store/takeover-rule.test.ts) when its owner is gone (no
 * heartbeat row, or none for three beats since the later of its last beat and the latest outage's
 * end), or else once one more lease (`$lease`, the claimer's) since it ran out and the grace after
 * the latest outage a worker saw (outages) are over. Binds `$now` and `$lease`.
 */
const TAKEABLE = `(($now >= (SELECT grace_until FROM outages WHERE id = 1)
      AND d.lease_expires_at + $lease <= $now) OR NOT EXISTS (
    SELECT 1 FROM workers o WHERE o.id = d.lease_owner
      AND max(o.last_seen_at, (SELECT back_at FROM outages WHERE id = 1))
        + ${STALE_AFTER_BEATS} * coalesce(o.heartbeat_ms, ${DEFAULT_HEARTBEAT_MS}) >= $now))`;

/**
 * Ordered delivery: an ordered delivery `d` waits while an earlier delivery (lower id: ids are
 * given in commit order under SQLite's write lock) of the same object to the same webhook is
 * queued (due or waiting for a retry) or being delivered; one that ended, either way, no longer
 * holds it back. Unordered rows never reach the probe; ordered ones pay one index probe of
 * deliveries_ordered_pending, which holds only unfinished ordered rows.
 */
export const ORDERED_READY_SQLITE = `(d.ordered = 0 OR NOT EXISTS (
    SELECT 1 FROM deliveries e INDEXED BY deliveries_ordered_pending
    WHERE e.webhook_id = d.webhook_id AND e.object_model = d.object_model
      AND e.object_id = d.object_id AND e.ordered = 1 AND e.state IN ('queued', 'delivering')
      AND e.id < d.id))`;

export const CLAIM_SQL = {
  /** Whether anything is claimable now: one index probe per sendable webhook. */
  anyDue: `SELECT 1 AS due FROM webhooks w
     WHERE w.enabled = 1 AND ${SENDABLE_WEBHOOK_SQLITE} AND EXISTS (
       SELECT 1 FROM deliveries d INDEXED BY deliveries_webhook_due
       WHERE d.webhook_id = w.id AND d.state = 'queued' AND d.next_attempt_at <= $now
         AND ${ORDERED_READY_SQLITE})
     LIMIT 1`,
  anyExpiredLease: `SELECT 1 AS expired FROM deliveries d INDEXED BY deliveries_leased
     WHERE d.state = 'delivering' AND d.lease_expires_at <= $now AND ${TAKEABLE} LIMIT 1`,
  expiredLeases: `SELECT d.*, (SELECT w.enabled FROM webhooks w WHERE w.id = d.webhook_id) AS enabled,
       (SELECT w.retry_attempts FROM webhooks w WHERE w.id = d.webhook_id) AS retry_attempts,
       ${payloadColumn("d")}
     FROM deliveries d INDEXED BY deliveries_leased
     WHERE d.state = 'delivering' AND d.lease_expires_at <= $now AND ${TAKEABLE}
     ORDER BY d.lease_expires_at LIMIT $limit`,
  /** A worker saw the database come back: live owners' leases get one lease of grace. */
  noteReturn: `UPDATE outages SET back_at = max(back_at, $now),
     grace_until = max(grace_until, $now + $lease) WHERE id = 1`,
  /**
   * Nobody could write for a while, as the database shows it: no worker has beaten for two of
   * its beats, and no return was noted since the last beat. Seen by a worker that did not see
   * the outage itself (started since, or idle through it).
   */
  silence: `SELECT count(*) AS silent FROM workers
     HAVING max(last_seen_at + 2 * coalesce(heartbeat_ms, ${DEFAULT_HEARTBEAT_MS})) < $now
       AND max(last_seen_at) > (SELECT back_at FROM outages WHERE id = 1)`,
  /** The webhooks that can send now and the due time of their oldest queued delivery. */
  sendableDue: `SELECT s.id AS webhook_id, (
       SELECT min(d.next_attempt_at) FROM deliveries d INDEXED BY deliveries_webhook_due
       WHERE d.webhook_id = s.id AND d.state = 'queued') AS t
     FROM (${SENDABLE_WEBHOOKS}) s`,
  /** One webhook's due deliveries, oldest first; an ordered one only when its turn has come. */
  dueOfWebhook: `SELECT d.*, ${payloadColumn("d")} FROM deliveries d INDEXED BY deliveries_webhook_due
     WHERE d.webhook_id = $webhook AND d.state = 'queued' AND d.next_attempt_at <= $now
       AND ${ORDERED_READY_SQLITE}
     ORDER BY d.next_attempt_at LIMIT $limit`,
  /**
   * The earliest time a queued delivery of an enabled webhook can be claimed: its due time, but
   * not before its webhook's pause ends or its next send slot comes within the horizon (?1).
   * One index probe per webhook (deliveries_webhook_due); ordered deliveries waiting for an
   * earlier one are passed over (the earlier one's end is a write, which wakes the workers).
   */
  nextQueued: `
  SELECT min(max(
    (SELECT d.next_attempt_at FROM deliveries d INDEXED BY deliveries_webhook_due
     WHERE d.state = 'queued' AND d.webhook_id = w.id AND ${ORDERED_READY_SQLITE}
     ORDER BY d.next_attempt_at LIMIT 1),
    max(w.paused_until, w.next_send_at) - ?1)) AS t
  FROM webhooks w WHERE w.enabled = 1`,
  nextLease: `SELECT d.lease_expires_at AS t FROM deliveries d INDEXED BY deliveries_leased
     WHERE d.state = 'delivering'
     ORDER BY d.lease_expires_at LIMIT 1`,
} as const;

type ClaimOptions = Parameters<DeliveryQueue["claim"]>[0];

interface GateRow {
  max_per_second: number | null;
  next_send_at: number;
  paused_until: number;
}

const GATE_SQL = "SELECT max_per_second, next_send_at, paused_until FROM webhooks WHERE id = ?";
const SET_NEXT_SEND_SQL = "UPDATE webhooks SET next_send_at = ? WHERE id = ?";

/**
 * Applies per-webhook send rates to candidates, reserving slots in `webhooks.next_send_at`.
 * Must run inside the claim's BEGIN IMMEDIATE transaction: the write lock is what makes the
 * reservation atomic across worker processes.
 */
export function admitBySendRate<T extends { webhookId: number }>(
  db: Database,
  candidates: readonly T[],
  options: { now: number; horizonMs?: number },
): Admission<T> {
  if (!db.inTransaction) {
    throw new Error("admitBySendRate must run inside the claim transaction");
  }
  const gateStmt = db.query<GateRow, [number]>(GATE_SQL);
  const gates = new Map<number, SendGate>();
  for (const { webhookId } of candidates) {
    if (gates.has(webhookId)) continue;
    const row = gateStmt.get(webhookId);
    if (row) {
      gates.set(webhookId, {
        maxPerSecond: row.max_per_second,
        nextSendAt: row.next_send_at,
        pausedUntil: row.paused_until,
      });
    }
  }
  const admission = admitByGates(candidates, gates, options);
  const setNextSendStmt = db.query(SET_NEXT_SEND_SQL);
  for (const [webhookId, nextSendAt] of admission.nextSendAt) {
    setNextSendStmt.run(nextSendAt, webhookId);
  }
  return admission;
}

/** Leases that ran out: each lost attempt recorded, then queued again, failed or taken over. */
function createLostLeases(db: Database) {
  const anyExpiredLeaseStmt = db.prepare<{ expired: number }, Params>(CLAIM_SQL.anyExpiredLease);
  const expiredLeasesStmt = db.prepare<
    DeliveryRow & { enabled: number | null; retry_attempts: number | null },
    Params
  >(CLAIM_SQL.expiredLeases);
  const lostAttemptStmt = db.prepare<unknown, Params>(
    `INSERT OR IGNORE INTO attempts (delivery_id, attempt, worker_id, started_at, duration_ms,
       status_code, outcome, error, webhook_id)
     VALUES ($id, $attempt, $worker_id, $started_at, $duration_ms, NULL, 'lease_expired', $error,
       $webhook_id)`,
  );
  const requeueLostStmt = db.prepare<unknown, Params>(
    `UPDATE deliveries SET state = 'queued', lease_owner = NULL, lease_expires_at = NULL,
       next_attempt_at = $now, last_error = $error, updated_at = $now
     WHERE id = $id AND state = 'delivering' AND attempts = $attempt`,
  );
  const failLostStmt = db.prepare<unknown, Params>(
    `UPDATE deliveries SET state = 'failed', lease_owner = NULL, lease_expires_at = NULL,
       last_error = $error, updated_at = $now, completed_at = $now
     WHERE id = $id AND state = 'delivering' AND attempts = $attempt`,
  );
  const reclaimStmt = db.prepare<DeliveryRow, Params>(
    `UPDATE deliveries SET attempts = attempts + 1, claim_generation = claim_generation + 1,
       lease_owner = $worker, lease_expires_at = $expires, last_error = $error, updated_at = $now
     WHERE id = $id AND state = 'delivering' AND attempts = $attempt
     RETURNING *, ${payloadColumn("deliveries")}`,
  );
  const anyExpired = (at: number, lease: number) =>
    anyExpiredLeaseStmt.get({ now: at, lease }) !== null;

  function takeOverLost(options: ClaimOptions, expires: number): DeliveryRow[] {
    const { workerId, limit, now: at, holding, leaseMs: lease } = options;
    const claimed: DeliveryRow[] = [];
    // The covering probe costs a tenth of the full query, and almost always finds nothing.
    if (!anyExpired(at, lease)) return claimed;
    for (const lost of expiredLeasesStmt.all({ now: at, limit, lease })) {
      if (lost.lease_owner === workerId && holding?.has(lost.id)) continue;
      const error = leaseExpiredMessage(lost.lease_owner);
      lostAttemptStmt.run({
        id: lost.id,
        attempt: lost.attempts,
        worker_id: lost.lease_owner,
        started_at: lost.updated_at,
        duration_ms: Math.max(0, at - lost.updated_at),
        error,
        webhook_id: lost.webhook_id,
      });
      const params = { id: lost.id, attempt: lost.attempts, now: at, error };
      // The lost attempt may have been sent: it counts towards the cap like any other.
      const cap = limitOfAttempts(lost.retry_attempts, options.maxAttempts ?? null);
      if (lost.attempts >= cap) failLostStmt.run(params);
      else if (lost.enabled !== 1) requeueLostStmt.run(params);
      else {
        const row = reclaimStmt.get({ ...params, worker: workerId, expires });
        if (row) claimed.push(row);
      }
    }
    return claimed;
  }

  return { takeOver: takeOverLost, anyExpired };
}

/** Due deliveries of sendable webhooks, read oldest first and leased by id. */
function createDueLeasing(db: Database) {
  const anyDueStmt = db.prepare<{ due: number }, Params>(CLAIM_SQL.anyDue);
  const sendableDueStmt = db.prepare<{ webhook_id: number; t: number | null }, Params>(
    CLAIM_SQL.sendableDue,
  );
  const dueOfWebhookStmt = db.prepare<DeliveryRow, Params>(CLAIM_SQL.dueOfWebhook);

  // Read, then leased by id, inside the claim's write transaction: a quarter cheaper than one
  // UPDATE … WHERE id IN (SELECT …) RETURNING *, whose RETURNING goes through a temporary table.
  const leaseStmt = perRowCount(db, (count) => {
    const ids = Array.from({ length: count }, (_, i) => `?${i + 4}`).join(", ");
    return `UPDATE deliveries SET state = 'delivering', attempts = attempts + 1,
           claim_generation = claim_generation + 1, lease_owner = ?1, lease_expires_at = ?2,
           updated_at = ?3
         WHERE state = 'queued' AND id IN (${ids})`;
  });
  function leaseDue(rows: DeliveryRow[], workerId: string, expires: number, at: number): void {
    if (rows.length === 0) return;
    const changed = leaseStmt(rows.length).run(
      workerId,
      expires,
      at,
      ...rows.map((row) => row.id),
    ).changes;
    if (changed !== rows.length) throw new Error("A claimed delivery changed under the write lock");
    for (const row of rows) {
      row.state = "delivering";
      row.attempts += 1;
      row.claim_generation += 1;
      row.lease_owner = workerId;
      row.lease_expires_at = expires;
      row.updated_at = at;
    }
  }

  /**
   * Up to `limit` due deliveries of sendable webhooks, oldest first: webhooks in the order of
   * their oldest due delivery, each read through its own index range, stopping once the next
   * webhook's oldest is newer than everything already taken.
   */
  function dueRows(limit: number, at: number, holding?: ReadonlySet<number>): DeliveryRow[] {
    // What the worker still holds is left out (its result written, the loop not yet told).
    const held = holding?.size ?? 0;
    const isFree = (row: DeliveryRow) => held === 0 || !holding?.has(row.id);
    const webhooks = sendableDueStmt
      .all({ now: at, horizon: RATE_HORIZON_MS })
      .filter((row): row is { webhook_id: number; t: number } => row.t !== null && row.t <= at)
      .sort((a, b) => a.t - b.t);
    let rows: DeliveryRow[] = [];
    for (const webhook of webhooks) {
      const newest = rows.length >= limit ? (rows[limit - 1]?.next_attempt_at ?? 0) : Infinity;
      if (webhook.t > newest) break;
      const taken = dueOfWebhookStmt
        .all({ webhook: webhook.webhook_id, now: at, limit: limit + held })
        .filter(isFree);
      rows = rows
        .concat(taken)
        .sort((a, b) => a.next_attempt_at - b.next_attempt_at || a.id - b.id);
      if (rows.length > limit) rows.length = limit;
    }
    return rows;
  }

  const anyDue = (at: number) => anyDueStmt.get({ now: at, horizon: RATE_HORIZON_MS }) !== null;
  return { rows: dueRows, lease: leaseDue, anyDue };
}

/**
 * The claim: leases that ran out are taken over (their lost attempt recorded), queued again
 * (webhook disabled) or failed (the attempt cap reached), then due deliveries of sendable
 * webhooks are leased, oldest first. Runs inside the caller's write transaction.
 */
export function createClaim(
  db: Database,
  changes: Pick<ChangeListener, "markSeen" | "notifyLocal">,
) {
  const webhookStmt = db.prepare<WebhookRow, [number]>("SELECT * FROM webhooks WHERE id = ?");
  const lost = createLostLeases(db);
  const due = createDueLeasing(db);

  const noteReturnStmt = db.prepare<unknown, Params>(CLAIM_SQL.noteReturn);
  const silenceStmt = db.prepare<{ silent: number }, Params>(CLAIM_SQL.silence);

  /**
   * `databaseReturned`: this process saw the database unavailable (a write failed or waited
   * long for the lock) since its last claim; or the workers' heartbeats show a silence (nobody
   * could write). The end of that outage is noted first, so the leases of live owners get their
   * grace before this claim could take them over.
   */
  function claimRows(options: ClaimOptions, databaseReturned = false): Claim[] {
    const { workerId, limit, leaseMs, now: at } = options;
    changes.markSeen();
    if (databaseReturned || silenceStmt.get({ now: at })) {
      noteReturnStmt.run({ now: at, lease: leaseMs });
    }
    const expires = at + leaseMs;
    const claimed = lost.takeOver(options, expires);
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
      const dueNow = due.rows(limit - claimed.length, at, options.holding);
      // Without a rate limit a delivery only waits for the end of a 429/503 pause (within the
      // horizon, or the claim would not have taken it). Rate-limited webhooks reserve send
      // slots shared by every worker in their row (this transaction holds the write lock);
      // rows over the rate are not leased.
      const leased: DeliveryRow[] = [];
      const limited: Array<{ row: DeliveryRow; webhookId: number }> = [];
      for (const row of dueNow) {
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
      due.lease(leased, workerId, expires, at);
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
        generation: row.claim_generation,
        ...(slot === undefined ? {} : { notBefore: slot }),
      };
    });
  }

  /** Whether a claim at `at` could find anything; marks the database as seen, as a claim does. */
  function claimable(at: number, lease: number): boolean {
    changes.markSeen();
    return due.anyDue(at) || lost.anyExpired(at, lease);
  }

  return { claimRows, claimable };
}
