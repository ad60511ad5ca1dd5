import type { Database } from "bun:sqlite";
import { RATE_HORIZON_MS, reserveSlots } from "../../webhooks/policy/rate-limit.ts";

/**
 * Claim filter on the webhook row `w`: leave out webhooks that are paused, or whose next send
 * slot is beyond the horizon. Binds `$now` and `$horizon` (RATE_HORIZON_MS). Add it next to
 * `w.enabled = 1` in the claim's due-delivery query.
 */
export const SENDABLE_WEBHOOK_SQLITE = "max(w.paused_until, w.next_send_at) <= $now + $horizon";

interface GateRow {
  max_per_second: number | null;
  next_send_at: number;
  paused_until: number;
}

const GATE_SQL = "SELECT max_per_second, next_send_at, paused_until FROM webhooks WHERE id = ?";
const SET_NEXT_SEND_SQL = "UPDATE webhooks SET next_send_at = ? WHERE id = ?";

export interface Admission<T> {
  /** Candidates that may be sent, each not before `notBefore` (epoch ms, maybe fractional). */
  admitted: Array<{ candidate: T; notBefore: number }>;
  /** Candidates over their webhook's rate or inside its pause: give them back unattempted. */
  refused: T[];
}

/**
 * Applies per-webhook send rates to claimed (or about to be claimed) deliveries, reserving slots
 * in `webhooks.next_send_at`. Must run inside the claim's BEGIN IMMEDIATE transaction: the
 * write lock is what makes the reservation atomic across worker processes. Candidates keep
 * their order; each webhook's first candidates get its earliest slots.
 */
export function admitBySendRate<T extends { webhookId: number }>(
  db: Database,
  candidates: readonly T[],
  options: { now: number; horizonMs?: number },
): Admission<T> {
  if (!db.inTransaction) {
    throw new Error("admitBySendRate must run inside the claim transaction");
  }
  const byWebhook = new Map<number, T[]>();
  for (const candidate of candidates) {
    const group = byWebhook.get(candidate.webhookId);
    if (group) group.push(candidate);
    else byWebhook.set(candidate.webhookId, [candidate]);
  }
  const notBefore = new Map<T, number>();
  for (const [webhookId, group] of byWebhook) {
    const row = db.query<GateRow, [number]>(GATE_SQL).get(webhookId);
    if (!row) continue;
    const reservation = reserveSlots(
      {
        maxPerSecond: row.max_per_second,
        nextSendAt: row.next_send_at,
        pausedUntil: row.paused_until,
      },
      { now: options.now, wanted: group.length, horizonMs: options.horizonMs },
    );
    reservation.slots.forEach((slot, i) => {
      const candidate = group[i];
      if (candidate) notBefore.set(candidate, slot);
    });
    if (reservation.nextSendAt !== row.next_send_at) {
      db.query(SET_NEXT_SEND_SQL).run(reservation.nextSendAt, webhookId);
    }
  }
  const admission: Admission<T> = { admitted: [], refused: [] };
  for (const candidate of candidates) {
    const at = notBefore.get(candidate);
    if (at === undefined) admission.refused.push(candidate);
    else admission.admitted.push({ candidate, notBefore: at });
  }
  return admission;
}

const PAUSE_SQL = "UPDATE webhooks SET paused_until = ?2 WHERE id = ?1 AND paused_until < ?2";

/**
 * Pauses a webhook until `until` (429/503 slow-down); never shortens a longer pause. Returns
 * whether the pause was extended.
 */
export function pauseWebhook(db: Database, webhookId: number, until: number): boolean {
  const run = db.transaction(
    () => db.query(PAUSE_SQL).run(webhookId, Math.ceil(until)).changes > 0,
  );
  return run.immediate();
}

/**
 * The earliest time a queued delivery of an enabled webhook can be claimed: its due time, but
 * not before its webhook's pause ends or its next send slot comes within the horizon. One
 * index probe per webhook (deliveries_webhook_due). Expired leases are not included: combine
 * with the queue's lease-expiry query.
 */
export const NEXT_QUEUED_DUE_SQLITE = `
  SELECT min(max(
    (SELECT min(d.next_attempt_at) FROM deliveries d
     WHERE d.state = 'queued' AND d.webhook_id = w.id),
    max(w.paused_until, w.next_send_at) - ?1)) AS t
  FROM webhooks w WHERE w.enabled = 1`;

export function nextQueuedDueAt(db: Database, horizonMs: number = RATE_HORIZON_MS): number | null {
  const row = db.query<{ t: number | null }, [number]>(NEXT_QUEUED_DUE_SQLITE).get(horizonMs);
  return row?.t ?? null;
}
