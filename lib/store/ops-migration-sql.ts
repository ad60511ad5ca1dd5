/**
 * Migration 2 (operability), for the integrator to append to MIGRATIONS in
 * lib/store/sqlite/migrations.ts and lib/store/postgres/migrations.ts. Kept here, not appended,
 * so that the stores' authors and this module do not edit one file at the same time.
 *
 * webhooks.failing_since / failed_deliveries: the current failure streak (endpoint health);
 *   NULL / 0 while healthy, cleared by any success and when the webhook is disabled.
 * webhooks.paused_until: 429/503 slow-down, no attempt to this webhook before this time.
 * webhooks.next_send_at: the rate-limit slot, the earliest time the next send may start; shared
 *   by every worker, reserved in the claim transaction (fractional milliseconds at high rates).
 * deliveries_webhook_due: the earliest queued delivery per webhook, so the worker's next-due
 *   query can skip webhooks that are paused or rate-limited without scanning their backlog.
 */
export const OPS_MIGRATION_SQLITE = `
  ALTER TABLE webhooks ADD COLUMN failing_since INTEGER;
  ALTER TABLE webhooks ADD COLUMN failed_deliveries INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE webhooks ADD COLUMN paused_until INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE webhooks ADD COLUMN next_send_at REAL NOT NULL DEFAULT 0;
  CREATE INDEX deliveries_webhook_due ON deliveries (webhook_id, next_attempt_at)
    WHERE state = 'queued';
`;

export const OPS_MIGRATION_POSTGRES = `
  ALTER TABLE webhooks
    ADD COLUMN failing_since BIGINT,
    ADD COLUMN failed_deliveries INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN paused_until BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN next_send_at DOUBLE PRECISION NOT NULL DEFAULT 0;
  CREATE INDEX deliveries_webhook_due ON deliveries (webhook_id, next_attempt_at)
    WHERE state = 'queued';
`;
