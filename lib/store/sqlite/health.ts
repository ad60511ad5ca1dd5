import type { Database } from "bun:sqlite";
import type { Streak } from "../../webhooks/model.ts";
import type { OperationalEventRecord, WebhookHealthRepo } from "../../webhooks/ports.ts";
import { createSqliteEventRecorder } from "./operational-events.ts";

const STREAK_SQL = "SELECT failing_since FROM webhooks WHERE id = ?";
const CLEAR_SQL =
  "UPDATE webhooks SET failing_since = NULL, failed_deliveries = 0 WHERE id = ? AND failing_since IS NOT NULL";
const EXTEND_SQL = `
  UPDATE webhooks SET failing_since = coalesce(failing_since, ?2),
    failed_deliveries = failed_deliveries + ?3
  WHERE id = ?1 AND enabled = 1
  RETURNING failing_since, failed_deliveries`;
const DISABLE_SQL = `
  UPDATE webhooks SET enabled = 0, disabled_reason = ?2, disabled_at = ?3, updated_at = ?3,
    failing_since = NULL, failed_deliveries = 0
  WHERE id = ?1 AND enabled = 1`;
const PAUSE_SQL = "UPDATE webhooks SET paused_until = ?2 WHERE id = ?1 AND paused_until < ?2";

/**
 * Failure streaks in the webhooks table (migration 2). Each write is one short BEGIN IMMEDIATE
 * transaction; a success reads first and writes only when there is a streak to end, so the
 * common case takes no write lock.
 */
export function createSqliteHealthStore(db: Database): Omit<WebhookHealthRepo, "pause"> {
  const streakStmt = db.prepare<{ failing_since: number | null }, [number]>(STREAK_SQL);
  const clearStmt = db.prepare<unknown, [number]>(CLEAR_SQL);
  const extendStmt = db.prepare<
    { failing_since: number; failed_deliveries: number },
    [number, number, number]
  >(EXTEND_SQL);
  const disableStmt = db.prepare<unknown, [number, string, number]>(DISABLE_SQL);
  const recordEvent = createSqliteEventRecorder(db);
  const clear = db.transaction((id: number) => clearStmt.run(id));
  const extend = db.transaction((id: number, now: number, failed: number) =>
    extendStmt.get(id, now, failed),
  );
  // The webhook.disabled event commits with the disabling, or neither does.
  const disable = db.transaction(
    (id: number, reason: string, now: number, announce: OperationalEventRecord | undefined) => {
      const changed = disableStmt.run(id, reason, now).changes;
      if (changed > 0 && announce) recordEvent(announce, now);
      return changed;
    },
  );
  return {
    async recordSuccess(webhookId) {
      if (streakStmt.get(webhookId)?.failing_since != null) clear.immediate(webhookId);
    },
    async recordFailure(webhookId, { now, deliveryFailed }): Promise<Streak | null> {
      const row = extend.immediate(webhookId, now, deliveryFailed ? 1 : 0);
      if (!row) return null;
      return { streakStartedAt: row.failing_since, failedDeliveries: row.failed_deliveries };
    },
    async disable(webhookId, { reason, now, announce }) {
      return disable.immediate(webhookId, reason, now, announce) > 0;
    },
  };
}

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

/** Failure streaks, automatic disabling and 429/503 pauses in the webhooks table (migration 2). */
export function createSqliteHealthRepo(db: Database): WebhookHealthRepo {
  return {
    ...createSqliteHealthStore(db),
    async pause(webhookId, until) {
      return pauseWebhook(db, webhookId, until);
    },
  };
}
