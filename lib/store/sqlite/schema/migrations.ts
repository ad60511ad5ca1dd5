import { EARLY_MIGRATIONS } from "./migrations-early.ts";

/**
 * Versioned schema migrations, applied in order on open; the applied version lives in
 * `PRAGMA user_version`. Never edit a released migration: append a new one. The first ten are
 * in migrations-early.ts.
 */
export const MIGRATIONS: readonly string[] = [
  ...EARLY_MIGRATIONS,
  // 11: API tokens (lib/app/auth/api-tokens.ts): only the SHA-256 of each token, never the token.
  `
  CREATE TABLE api_tokens (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    token_hash TEXT NOT NULL UNIQUE,
    can_write INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    last_used_at INTEGER,
    expires_at INTEGER
  );
  `,
  // 12: ids never reused, and ordered delivery's index (issue 28). Without AUTOINCREMENT a new
  // row takes max(id) + 1, so deleting the newest deliveries (a webhook removed) handed their
  // ids to the next ones, and a result still in flight for a removed delivery could match the
  // fence of a stranger (attempts' ids, the metrics' cursor, likewise). Rebuilt with
  // AUTOINCREMENT: new ids are above every one used since. foreign_keys is on and cannot be
  // turned off in a transaction, so the children are rebuilt too and the old tables dropped
  // children first (nothing cascades); renaming the new parent rewrites their REFERENCES.
  // deliveries.ordered: set at enqueue for an ordered webhook's object changes;
  // deliveries_ordered_pending finds an earlier unfinished delivery of the same (webhook,
  // object); it holds only ordered rows not yet finished, so unordered ones never write to it.
  `
  CREATE TABLE deliveries_v11 (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    webhook_id INTEGER NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
    message_id TEXT NOT NULL UNIQUE,
    event TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('queued', 'delivering', 'successful', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    lease_owner TEXT,
    lease_expires_at INTEGER,
    last_status INTEGER,
    last_error TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    completed_at INTEGER,
    url TEXT,
    headers TEXT,
    context TEXT,
    template_failed INTEGER NOT NULL DEFAULT 0,
    claim_generation INTEGER NOT NULL DEFAULT 0,
    object_model TEXT,
    object_id INTEGER,
    ordered INTEGER NOT NULL DEFAULT 0
  );
  INSERT INTO deliveries_v11 (id, webhook_id, message_id, event, state, attempts,
    next_attempt_at, lease_owner, lease_expires_at, last_status, last_error, created_at,
    updated_at, completed_at, url, headers, context, template_failed, claim_generation,
    object_model, object_id)
  SELECT id, webhook_id, message_id, event, state, attempts, next_attempt_at, lease_owner,
    lease_expires_at, last_status, last_error, created_at, updated_at, completed_at, url,
    headers, context, template_failed, claim_generation, object_model, object_id
  FROM deliveries;
  CREATE TABLE attempts_v11 (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    delivery_id INTEGER NOT NULL REFERENCES deliveries_v11(id) ON DELETE CASCADE,
    attempt INTEGER NOT NULL,
    worker_id TEXT,
    started_at INTEGER NOT NULL,
    duration_ms REAL NOT NULL,
    status_code INTEGER,
    outcome TEXT NOT NULL,
    error TEXT,
    response_headers TEXT,
    response_body TEXT,
    url TEXT,
    UNIQUE (delivery_id, attempt)
  );
  INSERT INTO attempts_v11 SELECT id, delivery_id, attempt, worker_id, started_at, duration_ms,
    status_code, outcome, error, response_headers, response_body, url FROM attempts;
  CREATE TABLE delivery_payloads_v11 (
    delivery_id INTEGER PRIMARY KEY REFERENCES deliveries_v11(id) ON DELETE CASCADE,
    payload TEXT NOT NULL
  );
  INSERT INTO delivery_payloads_v11 SELECT delivery_id, payload FROM delivery_payloads;
  DROP TABLE attempts;
  DROP TABLE delivery_payloads;
  DROP TABLE deliveries;
  ALTER TABLE deliveries_v11 RENAME TO deliveries;
  ALTER TABLE attempts_v11 RENAME TO attempts;
  ALTER TABLE delivery_payloads_v11 RENAME TO delivery_payloads;
  CREATE INDEX deliveries_leased ON deliveries (lease_expires_at) WHERE state = 'delivering';
  CREATE INDEX deliveries_webhook ON deliveries (webhook_id, id);
  CREATE INDEX deliveries_completed ON deliveries (completed_at)
    WHERE state IN ('successful', 'failed');
  CREATE INDEX deliveries_webhook_due ON deliveries (webhook_id, next_attempt_at)
    WHERE state = 'queued';
  CREATE INDEX deliveries_failed ON deliveries (id) WHERE state = 'failed';
  CREATE INDEX deliveries_object ON deliveries (object_model, object_id, id)
    WHERE object_id IS NOT NULL;
  CREATE INDEX deliveries_ordered_pending ON deliveries (webhook_id, object_model, object_id, id)
    WHERE ordered = 1 AND state IN ('queued', 'delivering');
  `,
  // 13: retry schedules and secret rotation. retry_schedule: none, short, day or a delay list
  // (policy/retry-schedule.ts), existing webhooks on the new default; retry_attempts: the
  // attempts it makes by itself (NULL for short: the worker's), which a claim compares a lost
  // lease with. previous_secret: the secret before a rotation, signing until
  // previous_secret_until.
  `
  ALTER TABLE webhooks ADD COLUMN retry_schedule TEXT NOT NULL DEFAULT 'day';
  ALTER TABLE webhooks ADD COLUMN retry_attempts INTEGER DEFAULT 8;
  ALTER TABLE webhooks ADD COLUMN previous_secret TEXT;
  ALTER TABLE webhooks ADD COLUMN previous_secret_until INTEGER;
  `,
  // 14: operational events (webhook.disabled, delivery.exhausted) recorded in the transaction
  // of the state change that causes them, until a worker fans them out (and deletes them).
  `
  CREATE TABLE operational_events (
    id INTEGER PRIMARY KEY,
    event TEXT NOT NULL,
    not_for INTEGER NOT NULL,
    data TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );
  `,
  // 15: item and webhook ids never reused (issue 33; as 12 for deliveries): rebuilt with
  // AUTOINCREMENT, every row and id kept. Foreign keys are off in migrate(), so dropping the old
  // webhooks does not cascade to their deliveries. An item id a delivery still names counts as
  // used (a deleted newest item's id is not handed out again).
  `
  CREATE TABLE webhooks_v15 (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL UNIQUE,
    url TEXT NOT NULL,
    method TEXT NOT NULL DEFAULT 'POST',
    content_type TEXT NOT NULL DEFAULT 'application/json',
    headers TEXT NOT NULL DEFAULT '[]',
    secret TEXT,
    events TEXT NOT NULL DEFAULT '["*"]',
    enabled INTEGER NOT NULL DEFAULT 1,
    disabled_reason TEXT,
    disabled_at INTEGER,
    max_per_second REAL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    failing_since INTEGER,
    failed_deliveries INTEGER NOT NULL DEFAULT 0,
    paused_until INTEGER NOT NULL DEFAULT 0,
    next_send_at REAL NOT NULL DEFAULT 0,
    body_template TEXT,
    conditions TEXT,
    ssl_verification INTEGER NOT NULL DEFAULT 1,
    ca_file TEXT,
    timeout_ms INTEGER,
    ordered INTEGER NOT NULL DEFAULT 0,
    retry_schedule TEXT NOT NULL DEFAULT 'day',
    retry_attempts INTEGER DEFAULT 8,
    previous_secret TEXT,
    previous_secret_until INTEGER
  );
  INSERT INTO webhooks_v15 (id, name, url, method, content_type, headers, secret, events,
    enabled, disabled_reason, disabled_at, max_per_second, created_at, updated_at,
    failing_since, failed_deliveries, paused_until, next_send_at, body_template, conditions,
    ssl_verification, ca_file, timeout_ms, ordered, retry_schedule, retry_attempts,
    previous_secret, previous_secret_until)
  SELECT id, name, url, method, content_type, headers, secret, events, enabled,
    disabled_reason, disabled_at, max_per_second, created_at, updated_at, failing_since,
    failed_deliveries, paused_until, next_send_at, body_template, conditions, ssl_verification,
    ca_file, timeout_ms, ordered, retry_schedule, retry_attempts, previous_secret,
    previous_secret_until
  FROM webhooks;
  DROP TABLE webhooks;
  ALTER TABLE webhooks_v15 RENAME TO webhooks;
  CREATE TABLE items_v15 (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    sku TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    quantity INTEGER NOT NULL CHECK (quantity >= 0),
    location TEXT NOT NULL DEFAULT '',
    updated_at TEXT NOT NULL
  );
  INSERT INTO items_v15 (id, sku, name, quantity, location, updated_at)
  SELECT id, sku, name, quantity, location, updated_at FROM items;
  DROP TABLE items;
  ALTER TABLE items_v15 RENAME TO items;
  INSERT INTO sqlite_sequence (name, seq)
  SELECT 'items', 0 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'items');
  UPDATE sqlite_sequence SET seq = max(seq, coalesce(
    (SELECT max(object_id) FROM deliveries WHERE object_model = 'item'), 0))
  WHERE name = 'items';
  `,
  // 16: idempotency keys of API POSTs (Idempotency-Key): the first request's hash and answer,
  // each kept 24 hours (expired rows go as new keys come).
  `
  CREATE TABLE idempotency_keys (
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    answer TEXT,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (scope, key)
  ) WITHOUT ROWID;
  CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
  `,
  // 17: a client certificate and its key per webhook (mutual TLS), as PEM file paths.
  `
  ALTER TABLE webhooks ADD COLUMN client_cert_file TEXT;
  ALTER TABLE webhooks ADD COLUMN client_key_file TEXT;
  `,
  // 18: the failing notice (lib/webhooks/events/failing-notices.ts): which failed attempt of a
  // delivery announces webhook.failing; when the open notice was given (NULL: none open), and
  // when the last webhook.recovered was (for the metrics' counts).
  `
  ALTER TABLE webhooks ADD COLUMN failing_notice_after INTEGER NOT NULL DEFAULT 4;
  ALTER TABLE webhooks ADD COLUMN failing_noticed_at INTEGER;
  ALTER TABLE webhooks ADD COLUMN failing_recovered_at INTEGER;
  `,
  // 19: a delivery left for the worker to render before the send (issue 33): its render was
  // stopped for want of time (a busy machine, the change's time spent), which is no failure.
  `
  ALTER TABLE deliveries ADD COLUMN render_pending INTEGER NOT NULL DEFAULT 0;
  `,
  // 20: a webhook's health (GET /api/webhooks/{id}/stats) from its attempts: each attempt names
  // its webhook; one index by (webhook, outcome, time) answers a window's counts per outcome, the
  // last success and the streak since as index ranges, the durations read from the index too.
  `
  ALTER TABLE attempts ADD COLUMN webhook_id INTEGER;
  UPDATE attempts SET webhook_id = (SELECT webhook_id FROM deliveries d WHERE d.id = attempts.delivery_id);
  CREATE INDEX attempts_webhook_outcome ON attempts (webhook_id, outcome, started_at, duration_ms);
  `,
];
