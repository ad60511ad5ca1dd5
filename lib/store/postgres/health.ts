import type { WebhookHealthRepo } from "../../webhooks/ports.ts";
import { DATABASE_NOW_MS, type StoreClock } from "./clock.ts";
import { type Db, toNumber, toNumberOrNull } from "./db.ts";
import { subscribedSql } from "./operational-events.ts";

const STREAK_SQL = "SELECT failing_since FROM webhooks WHERE id = $1";
const CLEAR_STREAK_SQL =
  "UPDATE webhooks SET failing_since = NULL, failed_deliveries = 0 WHERE id = $1 AND failing_since IS NOT NULL";
/** "Now" as $n: a test clock's reading, or null for the database's time (clock.ts). */
const clockAt = (n: number) => `(SELECT coalesce($${n}::bigint, ${DATABASE_NOW_MS}) AS t) c`;
/** $2 = now, $3 = 1 when the delivery ended failed, else 0. */
const EXTEND_STREAK_SQL = `
  UPDATE webhooks SET failing_since = coalesce(failing_since, c.t),
    failed_deliveries = failed_deliveries + $3
  FROM ${clockAt(2)}
  WHERE id = $1 AND enabled
  RETURNING failing_since, failed_deliveries, c.t AS clock_now`;
/**
 * $2 = reason, $3 = now, $4 = the webhook.disabled event's data (or null), recorded in the same
 * statement when another enabled webhook subscribes to it (the subquery sees the webhook as it
 * was before this statement: enabled, hence `w.id <> $1`).
 */
const DISABLE_WEBHOOK_SQL = `
  WITH disabled AS (
    UPDATE webhooks SET enabled = FALSE, disabled_reason = $2, disabled_at = c.t, updated_at = c.t,
      failing_since = NULL, failed_deliveries = 0
    FROM ${clockAt(3)}
    WHERE id = $1 AND enabled
    RETURNING webhooks.id, c.t
  ), announced AS (
    INSERT INTO operational_events (event, not_for, data, created_at)
    SELECT 'webhook.disabled', d.id, $4::text, d.t FROM disabled d
    WHERE $4::text IS NOT NULL AND ${subscribedSql("'webhook.disabled'", "$1")}
  )
  SELECT count(*)::int AS disabled FROM disabled`;
/** 429/503 slow-down: $1 = webhook id, $2 = for how long (ms) from $3 = now. */
const PAUSE_WEBHOOK_SQL = `
  UPDATE webhooks SET paused_until = c.t + $2
  FROM ${clockAt(3)}
  WHERE id = $1 AND paused_until < c.t + $2`;

/**
 * Failure streaks, automatic disabling and 429/503 pauses in the webhooks table (migration 2),
 * same behaviour as the SQLite one. Each write is one statement.
 */
export function createPostgresHealthRepo(db: Db, clock: StoreClock): WebhookHealthRepo {
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
        clock.param(now),
        deliveryFailed ? 1 : 0,
      ]);
      if (!row) return null;
      const since = toNumberOrNull(row.failing_since);
      return {
        // As the caller's clock reads it: the streak's length is what the database measured.
        streakStartedAt:
          since === null ? null : clock.toCaller(since, toNumber(row.clock_now), now),
        failedDeliveries: Number(row.failed_deliveries),
      };
    },
    async disable(webhookId, { reason, now, announce }) {
      const [row] = await db.sql.unsafe(DISABLE_WEBHOOK_SQL, [
        webhookId,
        reason,
        clock.param(now),
        announce?.data ?? null,
      ]);
      return Number(row?.disabled ?? 0) > 0;
    },
    async pause(webhookId, until) {
      const callerNow = clock.callerNow();
      const result = await db.sql.unsafe(PAUSE_WEBHOOK_SQL, [
        webhookId,
        Math.ceil(until - callerNow),
        clock.param(callerNow),
      ]);
      return result.count > 0;
    },
  };
}
