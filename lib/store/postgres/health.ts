import type { WebhookHealthRepo } from "../../webhooks/ports.ts";
import { type Db, toNumberOrNull } from "./db.ts";

const STREAK_SQL = "SELECT failing_since FROM webhooks WHERE id = $1";
const CLEAR_STREAK_SQL =
  "UPDATE webhooks SET failing_since = NULL, failed_deliveries = 0 WHERE id = $1 AND failing_since IS NOT NULL";
/** $2 = now, $3 = 1 when the delivery ended failed, else 0. */
const EXTEND_STREAK_SQL = `
  UPDATE webhooks SET failing_since = coalesce(failing_since, $2),
    failed_deliveries = failed_deliveries + $3
  WHERE id = $1 AND enabled
  RETURNING failing_since, failed_deliveries`;
/** $2 = reason, $3 = now. */
const DISABLE_WEBHOOK_SQL = `
  UPDATE webhooks SET enabled = FALSE, disabled_reason = $2, disabled_at = $3, updated_at = $3,
    failing_since = NULL, failed_deliveries = 0
  WHERE id = $1 AND enabled`;
/** 429/503 slow-down: $1 = webhook id, $2 = paused until. */
const PAUSE_WEBHOOK_SQL =
  "UPDATE webhooks SET paused_until = $2 WHERE id = $1 AND paused_until < $2";

/**
 * Failure streaks, automatic disabling and 429/503 pauses in the webhooks table (migration 2),
 * same behaviour as the SQLite one. Each write is one statement.
 */
export function createPostgresHealthRepo(db: Db): WebhookHealthRepo {
  return {
    async recordSuccess(webhookId) {
      const [row] = await db.sql.unsafe(STREAK_SQL, [webhookId]);
      if (row && row.failing_since !== null) {
        await db.sql.unsafe(CLEAR_STREAK_SQL, [webhookId]);
      }
    },
    async recordFailure(webhookId, { now, deliveryFailed }) {
      const [row] = await db.sql.unsafe(EXTEND_STREAK_SQL, [
        webhookId,
        now,
        deliveryFailed ? 1 : 0,
      ]);
      if (!row) return null;
      return {
        streakStartedAt: toNumberOrNull(row.failing_since),
        failedDeliveries: Number(row.failed_deliveries),
      };
    },
    async disable(webhookId, { reason, now }) {
      const result = await db.sql.unsafe(DISABLE_WEBHOOK_SQL, [webhookId, reason, now]);
      return result.count > 0;
    },
    async pause(webhookId, until) {
      const result = await db.sql.unsafe(PAUSE_WEBHOOK_SQL, [webhookId, Math.ceil(until)]);
      return result.count > 0;
    },
  };
}
