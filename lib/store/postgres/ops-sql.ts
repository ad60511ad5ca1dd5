/**
 * The PostgreSQL twins of lib/ops/sqlite/*, as text for the PostgreSQL store (lib/store/postgres)
 * to use; not run by this module. Parameters are positional ($1…), times BIGINT epoch ms.
 */

/** Claim filter on the webhook row `w`, next to `w.enabled`: $1 = now, $2 = horizon (ms). */
export const SENDABLE_WEBHOOK_POSTGRES = "GREATEST(w.paused_until, w.next_send_at) <= $1 + $2";

/**
 * Rate-limit admission inside the claim transaction: lock the candidates' webhook rows (in id
 * order, so two claims cannot deadlock), reserve slots with reserveSlots(), write them back.
 */
export const LOCK_SEND_GATES_POSTGRES = `
  SELECT id, max_per_second, next_send_at, paused_until FROM webhooks
  WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE`;
export const SET_NEXT_SEND_POSTGRES = "UPDATE webhooks SET next_send_at = $2 WHERE id = $1";

/** 429/503 slow-down: $1 = webhook id, $2 = paused until. */
export const PAUSE_WEBHOOK_POSTGRES =
  "UPDATE webhooks SET paused_until = $2 WHERE id = $1 AND paused_until < $2";

/**
 * Earliest claimable queued delivery ($1 = horizon). GREATEST ignores NULLs (SQLite's max()
 * does not), hence the explicit filter on webhooks with nothing queued.
 */
export const NEXT_QUEUED_DUE_POSTGRES = `
  SELECT min(GREATEST(q.t, GREATEST(w.paused_until, w.next_send_at) - $1)) AS t
  FROM webhooks w
  CROSS JOIN LATERAL (
    SELECT min(d.next_attempt_at) AS t FROM deliveries d
    WHERE d.state = 'queued' AND d.webhook_id = w.id) q
  WHERE w.enabled AND q.t IS NOT NULL`;

/** Endpoint health: $1 = webhook id. */
export const STREAK_POSTGRES = "SELECT failing_since FROM webhooks WHERE id = $1";
export const CLEAR_STREAK_POSTGRES =
  "UPDATE webhooks SET failing_since = NULL, failed_deliveries = 0 WHERE id = $1 AND failing_since IS NOT NULL";
/** $2 = now, $3 = 1 when the delivery ended failed, else 0. */
export const EXTEND_STREAK_POSTGRES = `
  UPDATE webhooks SET failing_since = coalesce(failing_since, $2),
    failed_deliveries = failed_deliveries + $3
  WHERE id = $1 AND enabled
  RETURNING failing_since, failed_deliveries`;
/** $2 = reason, $3 = now. */
export const DISABLE_WEBHOOK_POSTGRES = `
  UPDATE webhooks SET enabled = FALSE, disabled_reason = $2, disabled_at = $3, updated_at = $3,
    failing_since = NULL, failed_deliveries = 0
  WHERE id = $1 AND enabled`;

/** Metrics: due work at $1 (now). */
export const DUE_SUMMARY_POSTGRES = `
  SELECT count(*)::int AS n, min(due) AS oldest FROM (
    SELECT d.next_attempt_at AS due FROM deliveries d
    WHERE d.state = 'queued' AND d.next_attempt_at <= $1
      AND EXISTS (SELECT 1 FROM webhooks w WHERE w.id = d.webhook_id AND w.enabled)
    UNION ALL
    SELECT d.lease_expires_at FROM deliveries d
    WHERE d.state = 'delivering' AND d.lease_expires_at <= $1) due_now`;
export const LAST_ATTEMPT_ID_POSTGRES = "SELECT coalesce(max(id), 0)::bigint AS id FROM attempts";
/**
 * $1 = after id, $2 = limit. Unlike SQLite, concurrent PostgreSQL transactions can commit ids
 * out of order, so an attempt committed late behind a newer id can be missed by /metrics.
 */
export const ATTEMPTS_AFTER_POSTGRES = `
  SELECT id, status_code, outcome, duration_ms FROM attempts
  WHERE id > $1 ORDER BY id LIMIT $2`;

/** Retention, one batch: $1 = older than, $2 = batch size. */
export const PURGE_BATCH_POSTGRES = `
  DELETE FROM deliveries WHERE id IN (
    SELECT id FROM deliveries
    WHERE state IN ('successful', 'failed') AND completed_at < $1
    LIMIT $2)`;
