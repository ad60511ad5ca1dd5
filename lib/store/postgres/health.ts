import type { WebhookHealthRepo } from "../../webhooks/ports.ts";
import { type Db, toNumberOrNull } from "./db.ts";
import {
  CLEAR_STREAK_POSTGRES,
  DISABLE_WEBHOOK_POSTGRES,
  EXTEND_STREAK_POSTGRES,
  PAUSE_WEBHOOK_POSTGRES,
  STREAK_POSTGRES,
} from "./ops-sql.ts";

/**
 * Failure streaks, automatic disabling and 429/503 pauses in the webhooks table (migration 2),
 * same behaviour as lib/ops/sqlite/health.ts. Each write is one statement.
 */
export function createPostgresHealthRepo(db: Db): WebhookHealthRepo {
  return {
    async recordSuccess(webhookId) {
      const [row] = await db.sql.unsafe(STREAK_POSTGRES, [webhookId]);
      if (row && row.failing_since !== null) {
        await db.sql.unsafe(CLEAR_STREAK_POSTGRES, [webhookId]);
      }
    },
    async recordFailure(webhookId, { now, deliveryFailed }) {
      const [row] = await db.sql.unsafe(EXTEND_STREAK_POSTGRES, [
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
      const result = await db.sql.unsafe(DISABLE_WEBHOOK_POSTGRES, [webhookId, reason, now]);
      return result.count > 0;
    },
    async pause(webhookId, until) {
      const result = await db.sql.unsafe(PAUSE_WEBHOOK_POSTGRES, [webhookId, Math.ceil(until)]);
      return result.count > 0;
    },
  };
}
