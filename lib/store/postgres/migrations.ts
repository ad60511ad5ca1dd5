import type { SQL } from "bun";
import { refuseNewerSchema } from "../schema-version.ts";

/**
 * Versioned schema migrations, the PostgreSQL twin of lib/store/sqlite/schema/migrations.ts (same
 * tables, columns and meaning): ids are BIGSERIAL, times BIGINT epoch milliseconds, webhook
 * headers and events JSONB. A delivery's payload stays TEXT: it is the exact body that is
 * signed and sent, which JSONB would reformat. Never edit a released migration: append one.
 */
export const MIGRATIONS: readonly string[] = [
  // 1: webhooks, deliveries, attempts, items, worker heartbeats.
  `
  CREATE TABLE webhooks (
    id BIGSERIAL PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    url TEXT NOT NULL,
    method TEXT NOT NULL DEFAULT 'POST',
    content_type TEXT NOT NULL DEFAULT 'application/json',
    headers JSONB NOT NULL DEFAULT '[]',
    secret TEXT,
    events JSONB NOT NULL DEFAULT '["*"]',
    enabled BOOLEAN NOT NULL DEFAULT TRUE,
    disabled_reason TEXT,
    disabled_at BIGINT,
    max_per_second DOUBLE PRECISION,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
  );

  CREATE TABLE deliveries (
    id BIGSERIAL PRIMARY KEY,
    webhook_id BIGINT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
    message_id TEXT NOT NULL UNIQUE,
    event TEXT NOT NULL,
    payload TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('queued', 'delivering', 'successful', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at BIGINT NOT NULL,
    lease_owner TEXT,
    lease_expires_at BIGINT,
    last_status INTEGER,
    last_error TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    completed_at BIGINT
  );
  -- The claim query reads only these two partial indexes (due queued rows, expired leases).
  CREATE INDEX deliveries_due ON deliveries (next_attempt_at, id) WHERE state = 'queued';
  CREATE INDEX deliveries_leased ON deliveries (lease_expires_at) WHERE state = 'delivering';
  -- Admin listings: newest first per state or per webhook; retention by completion time.
  CREATE INDEX deliveries_state ON deliveries (state, id);
  CREATE INDEX deliveries_webhook ON deliveries (webhook_id, id);
  CREATE INDEX deliveries_completed ON deliveries (completed_at)
    WHERE state IN ('successful', 'failed');

  CREATE TABLE attempts (
    id BIGSERIAL PRIMARY KEY,
    delivery_id BIGINT NOT NULL REFERENCES deliveries(id) ON DELETE CASCADE,
    attempt INTEGER NOT NULL,
    worker_id TEXT,
    started_at BIGINT NOT NULL,
    duration_ms DOUBLE PRECISION NOT NULL,
    status_code INTEGER,
    outcome TEXT NOT NULL,
    error TEXT,
    response_headers TEXT,
    response_body TEXT,
    UNIQUE (delivery_id, attempt)
  );

  CREATE TABLE items (
    id BIGSERIAL PRIMARY KEY,
    sku TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    quantity BIGINT NOT NULL CHECK (quantity >= 0),
    location TEXT NOT NULL DEFAULT '',
    updated_at TEXT NOT NULL
  );

  CREATE TABLE workers (
    id TEXT PRIMARY KEY,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    version TEXT NOT NULL,
    started_at BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL,
    in_flight INTEGER NOT NULL DEFAULT 0,
    concurrency INTEGER NOT NULL
  );
  `,
  // 2: operability. webhooks.failing_since / failed_deliveries: the current failure streak
  // (endpoint health), NULL / 0 while healthy. paused_until: 429/503 slow-down, no attempt
  // before this time. next_send_at: the rate-limit slot, the earliest time the next send may
  // start, shared by every worker and reserved in the claim (fractional ms at high rates).
  // deliveries_webhook_due: the earliest queued delivery per webhook, so the next-due query
  // skips paused or rate-limited webhooks without scanning their backlog.
  `
  ALTER TABLE webhooks
    ADD COLUMN failing_since BIGINT,
    ADD COLUMN failed_deliveries INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN paused_until BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN next_send_at DOUBLE PRECISION NOT NULL DEFAULT 0;
  CREATE INDEX deliveries_webhook_due ON deliveries (webhook_id, next_attempt_at)
    WHERE state = 'queued';
`,
  // 3: admin sessions ended by logout before their cookie expires (only those: a session
  // cookie is signed and checks out on its own; a row lives at most its 12 hours).
  `
  CREATE TABLE revoked_sessions (
    id TEXT PRIMARY KEY,
    expires_at BIGINT NOT NULL
  );
`,
  // 4: NetBox's webhook options: body template, conditions, TLS, per-webhook timeout; per
  // delivery the URL and headers rendered at enqueue, the template context, a template failure.
  `
  ALTER TABLE webhooks ADD COLUMN body_template TEXT;
  ALTER TABLE webhooks ADD COLUMN conditions JSONB;
  ALTER TABLE webhooks ADD COLUMN ssl_verification BOOLEAN NOT NULL DEFAULT TRUE;
  ALTER TABLE webhooks ADD COLUMN ca_file TEXT;
  ALTER TABLE webhooks ADD COLUMN timeout_ms INTEGER;
  ALTER TABLE deliveries ADD COLUMN url TEXT;
  ALTER TABLE deliveries ADD COLUMN headers JSONB;
  ALTER TABLE deliveries ADD COLUMN context TEXT;
  ALTER TABLE deliveries ADD COLUMN template_failed BOOLEAN NOT NULL DEFAULT FALSE;
  `,
  // 5: the URL each attempt went to; NULL for attempts recorded before it was kept.
  `
  ALTER TABLE attempts ADD COLUMN url TEXT;
  `,
  // 6: claims and outages (as SQLite's 8). claim_generation: +1 at every lease, never lowered,
  // so a result is fenced by its claim (owner and generation). object_model / object_id: the
  // changed object, so an item's deliveries are one index range (filled from the payload for
  // older rows). outages: the end of the latest outage a worker saw and the grace it gives
  // live owners' leases; workers.heartbeat_ms: how often a worker beats.
  `
  ALTER TABLE deliveries ADD COLUMN claim_generation INTEGER NOT NULL DEFAULT 0;
  UPDATE deliveries SET claim_generation = attempts WHERE state = 'delivering';
  ALTER TABLE deliveries ADD COLUMN object_model TEXT, ADD COLUMN object_id BIGINT;
  CREATE FUNCTION pg_temp.jsonb_or_null(body text) RETURNS jsonb LANGUAGE plpgsql AS $$
    BEGIN RETURN body::jsonb; EXCEPTION WHEN others THEN RETURN NULL; END $$;
  UPDATE deliveries d SET object_model = b.body ->> 'model',
    object_id = (b.body #>> '{data,id}')::bigint
  FROM (SELECT id, pg_temp.jsonb_or_null(coalesce(context, payload)) AS body FROM deliveries
        WHERE event LIKE 'item.%') b
  WHERE b.id = d.id AND jsonb_typeof(b.body #> '{data,id}') = 'number'
    AND (b.body #>> '{data,id}') ~ '^[0-9]{1,18}$';
  CREATE INDEX deliveries_object ON deliveries (object_model, object_id, id)
    WHERE object_id IS NOT NULL;
  CREATE TABLE outages (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    back_at BIGINT NOT NULL,
    grace_until BIGINT NOT NULL
  );
  INSERT INTO outages (id, back_at, grace_until) VALUES (1, 0, 0);
  ALTER TABLE workers ADD COLUMN heartbeat_ms INTEGER;
  `,
  // 7: deliveries_due (queued, by due time) held the same rows as deliveries_webhook_due and
  // cost an index write at every enqueue, claim and retry; nothing reads it (the claim goes
  // webhook by webhook, counts use (state, id)).
  `
  DROP INDEX deliveries_due;
  `,
  // 8: ordered webhooks (as SQLite's 10): an object's deliveries to one are sent one at a
  // time, in the order its changes were committed.
  `
  ALTER TABLE webhooks ADD COLUMN ordered BOOLEAN NOT NULL DEFAULT FALSE;
  `,
  // 9: API tokens (as SQLite's 11): only the SHA-256 of each token, never the token.
  `
  CREATE TABLE api_tokens (
    id BIGSERIAL PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    token_hash TEXT NOT NULL UNIQUE,
    can_write BOOLEAN NOT NULL DEFAULT FALSE,
    created_at BIGINT NOT NULL,
    last_used_at BIGINT,
    expires_at BIGINT
  );
  `,
  // 10: ordered delivery (as SQLite's 12; ids come from a sequence and are never reused here).
  // deliveries.ordered: set at enqueue for an ordered webhook's object changes;
  // deliveries_ordered_pending finds an earlier unfinished delivery of the same (webhook,
  // object); it holds only ordered rows not yet finished, so unordered ones never write to it.
  `
  ALTER TABLE deliveries ADD COLUMN ordered BOOLEAN NOT NULL DEFAULT FALSE;
  CREATE INDEX deliveries_ordered_pending ON deliveries (webhook_id, object_model, object_id, id)
    WHERE ordered AND state IN ('queued', 'delivering');
  `,
  // 11: retry schedules and secret rotation (as SQLite's 13).
  `
  ALTER TABLE webhooks ADD COLUMN retry_schedule TEXT NOT NULL DEFAULT 'day',
    ADD COLUMN retry_attempts INTEGER DEFAULT 8,
    ADD COLUMN previous_secret TEXT,
    ADD COLUMN previous_secret_until BIGINT;
  `,
  // 12: operational events (as SQLite's 14), recorded with the state change that causes them
  // until a worker fans them out (and deletes them).
  `
  CREATE TABLE operational_events (
    id BIGSERIAL PRIMARY KEY,
    event TEXT NOT NULL,
    not_for BIGINT NOT NULL,
    data TEXT NOT NULL,
    created_at BIGINT NOT NULL
  );
  `,
  // 13: idempotency keys of API POSTs (as SQLite's 16).
  `
  CREATE TABLE idempotency_keys (
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    answer TEXT,
    expires_at BIGINT NOT NULL,
    PRIMARY KEY (scope, key)
  );
  CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
  `,
  // 14: a client certificate and its key per webhook (as SQLite's 17).
  `
  ALTER TABLE webhooks ADD COLUMN client_cert_file TEXT;
  ALTER TABLE webhooks ADD COLUMN client_key_file TEXT;
  `,
  // 15: the failing notice (lib/webhooks/events/failing-notices.ts; as SQLite's 18): which failed attempt of a
  // delivery announces webhook.failing; when the open notice was given (NULL: none open), and
  // when the last webhook.recovered was (for the metrics' counts).
  `
  ALTER TABLE webhooks ADD COLUMN failing_notice_after INTEGER NOT NULL DEFAULT 4;
  ALTER TABLE webhooks ADD COLUMN failing_noticed_at BIGINT;
  ALTER TABLE webhooks ADD COLUMN failing_recovered_at BIGINT;
  `,
  // 16: a delivery left for the worker to render (as SQLite's 19).
  `
  ALTER TABLE deliveries ADD COLUMN render_pending BOOLEAN NOT NULL DEFAULT FALSE;
  `,
  // 17: a webhook's health from its attempts (as SQLite's 20): each attempt names its webhook,
  // one index by (webhook, outcome, time) with the duration in it.
  `
  ALTER TABLE attempts ADD COLUMN webhook_id BIGINT;
  UPDATE attempts a SET webhook_id = d.webhook_id FROM deliveries d WHERE d.id = a.delivery_id;
  CREATE INDEX attempts_webhook_outcome ON attempts (webhook_id, outcome, started_at)
    INCLUDE (duration_ms);
  `,
];

/** Key of the advisory lock that serialises migrations across processes (any constant will do). */
export const MIGRATION_LOCK_KEY = 7_263_945_001;

/**
 * Applies pending migrations and returns the schema version. Each migration runs in its own
 * transaction that first takes a transaction-level advisory lock, so processes starting at once
 * queue up behind each other; whoever comes second finds the version already applied. A
 * database migrated past the last of `migrations` is refused (SchemaTooNewError), never used.
 */
export async function migrate(
  sql: SQL,
  migrations: readonly string[] = MIGRATIONS,
): Promise<number> {
  for (;;) {
    const applied = await sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`;
      await tx`CREATE TABLE IF NOT EXISTS schema_migrations (
        version INTEGER PRIMARY KEY,
        applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
      )`;
      const [row] = await tx<Array<{ version: number }>>`
        SELECT coalesce(max(version), 0)::int AS version FROM schema_migrations`;
      const version = row?.version ?? 0;
      refuseNewerSchema(version, migrations.length);
      const next = migrations[version];
      if (next === undefined) return false;
      await tx.unsafe(next).simple();
      await tx`INSERT INTO schema_migrations (version) VALUES (${version + 1})`;
      return true;
    });
    if (!applied) break;
  }
  return migrations.length;
}
