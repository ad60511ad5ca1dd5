/**
 * Migrations 1 to 10, as released: the first schema and what the first issues added to it.
 * MIGRATIONS (migrations.ts) applies them first, then the later ones. Never edit one: append.
 */
export const EARLY_MIGRATIONS: readonly string[] = [
  // 1: webhooks, deliveries, attempts, items, worker heartbeats.
  `
  CREATE TABLE webhooks (
    id INTEGER PRIMARY KEY,
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
    updated_at INTEGER NOT NULL
  );

  CREATE TABLE deliveries (
    id INTEGER PRIMARY KEY,
    webhook_id INTEGER NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
    message_id TEXT NOT NULL UNIQUE,
    event TEXT NOT NULL,
    payload TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('queued', 'delivering', 'successful', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    lease_owner TEXT,
    lease_expires_at INTEGER,
    last_status INTEGER,
    last_error TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    completed_at INTEGER
  );
  -- The claim query reads only these two partial indexes (due queued rows, expired leases).
  CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE state = 'queued';
  CREATE INDEX deliveries_leased ON deliveries (lease_expires_at) WHERE state = 'delivering';
  -- Admin listings: newest first per state or per webhook; retention by completion time.
  CREATE INDEX deliveries_state ON deliveries (state, id);
  CREATE INDEX deliveries_webhook ON deliveries (webhook_id, id);
  CREATE INDEX deliveries_completed ON deliveries (completed_at)
    WHERE state IN ('successful', 'failed');

  CREATE TABLE attempts (
    id INTEGER PRIMARY KEY,
    delivery_id INTEGER NOT NULL REFERENCES deliveries(id) ON DELETE CASCADE,
    attempt INTEGER NOT NULL,
    worker_id TEXT,
    started_at INTEGER NOT NULL,
    duration_ms REAL NOT NULL,
    status_code INTEGER,
    outcome TEXT NOT NULL,
    error TEXT,
    response_headers TEXT,
    response_body TEXT,
    UNIQUE (delivery_id, attempt)
  );

  CREATE TABLE items (
    id INTEGER PRIMARY KEY,
    sku TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    quantity INTEGER NOT NULL CHECK (quantity >= 0),
    location TEXT NOT NULL DEFAULT '',
    updated_at TEXT NOT NULL
  );

  CREATE TABLE workers (
    id TEXT PRIMARY KEY,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    version TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL,
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
  ALTER TABLE webhooks ADD COLUMN failing_since INTEGER;
  ALTER TABLE webhooks ADD COLUMN failed_deliveries INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE webhooks ADD COLUMN paused_until INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE webhooks ADD COLUMN next_send_at REAL NOT NULL DEFAULT 0;
  CREATE INDEX deliveries_webhook_due ON deliveries (webhook_id, next_attempt_at)
    WHERE state = 'queued';
`,
  // 3: delivery throughput. deliveries_state (state, id) cost an index write at every state
  // change (enqueue, claim, finish) and a page per state in every commit; listings and counts
  // now read the partial indexes the claim keeps anyway (queued: deliveries_due, delivering:
  // deliveries_leased), this one for failed rows (written only when a delivery fails or is
  // retried), and the primary key (see LIST_SQL in queue.ts).
  `
  DROP INDEX deliveries_state;
  CREATE INDEX deliveries_failed ON deliveries (id) WHERE state = 'failed';
  `,
  // 4: admin sessions ended by logout before their cookie expires (only those: a session
  // cookie is signed and checks out on its own; a row lives at most its 12 hours).
  `
  CREATE TABLE revoked_sessions (
    id TEXT PRIMARY KEY,
    expires_at INTEGER NOT NULL
  ) WITHOUT ROWID;
  `,
  // 5: NetBox's webhook options: body template, conditions, TLS, per-webhook timeout; per
  // delivery the URL and headers rendered at enqueue, the template context, a template failure.
  `
  ALTER TABLE webhooks ADD COLUMN body_template TEXT;
  ALTER TABLE webhooks ADD COLUMN conditions TEXT;
  ALTER TABLE webhooks ADD COLUMN ssl_verification INTEGER NOT NULL DEFAULT 1;
  ALTER TABLE webhooks ADD COLUMN ca_file TEXT;
  ALTER TABLE webhooks ADD COLUMN timeout_ms INTEGER;
  ALTER TABLE deliveries ADD COLUMN url TEXT;
  ALTER TABLE deliveries ADD COLUMN headers TEXT;
  ALTER TABLE deliveries ADD COLUMN context TEXT;
  ALTER TABLE deliveries ADD COLUMN template_failed INTEGER NOT NULL DEFAULT 0;
  `,
  // 6: payloads in a table of their own. A delivery row is rewritten at every state change
  // (claim, result, retry) and its page goes to the WAL each time: with the payload inline a
  // page held ~7 rows (far fewer with NetBox-sized bodies), without it ~35, so a batch of
  // results writes a fifth of the pages. The payload is written once and read at the claim.
  `
  CREATE TABLE delivery_payloads (
    delivery_id INTEGER PRIMARY KEY REFERENCES deliveries(id) ON DELETE CASCADE,
    payload TEXT NOT NULL
  );
  INSERT INTO delivery_payloads (delivery_id, payload) SELECT id, payload FROM deliveries;
  ALTER TABLE deliveries DROP COLUMN payload;
  `,
  // 7: the URL each attempt went to; NULL for attempts recorded before it was kept.
  `
  ALTER TABLE attempts ADD COLUMN url TEXT;
  `,
  // 8: claims and outages. claim_generation: +1 at every lease (claim or takeover), never
  // lowered (a release lowers attempts), so a result is fenced by its claim (owner and
  // generation) and can never overwrite a newer claim's. object_model / object_id: the changed
  // object, so an item's deliveries are one index range (filled from the payload for older
  // rows). outages: the end of the latest outage a worker saw and the grace it gives live
  // owners' leases; workers.heartbeat_ms: how often a worker beats (when it counts as gone).
  `
  ALTER TABLE deliveries ADD COLUMN claim_generation INTEGER NOT NULL DEFAULT 0;
  UPDATE deliveries SET claim_generation = attempts WHERE state = 'delivering';
  ALTER TABLE deliveries ADD COLUMN object_model TEXT;
  ALTER TABLE deliveries ADD COLUMN object_id INTEGER;
  UPDATE deliveries SET
    object_model = json_extract(b.body, '$.model'),
    object_id = json_extract(b.body, '$.data.id')
  FROM (SELECT d.id, coalesce(d.context, p.payload) AS body
        FROM deliveries d JOIN delivery_payloads p ON p.delivery_id = d.id) b
  WHERE b.id = deliveries.id AND deliveries.event LIKE 'item.%' AND json_valid(b.body)
    AND json_type(b.body, '$.data.id') = 'integer';
  CREATE INDEX deliveries_object ON deliveries (object_model, object_id, id)
    WHERE object_id IS NOT NULL;
  CREATE TABLE outages (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    back_at INTEGER NOT NULL,
    grace_until INTEGER NOT NULL
  );
  INSERT INTO outages (id, back_at, grace_until) VALUES (1, 0, 0);
  ALTER TABLE workers ADD COLUMN heartbeat_ms INTEGER;
  `,
  // 9: deliveries_due (queued, by due time) held the same rows as deliveries_webhook_due
  // (queued, by webhook and due time) and cost an index write at every enqueue, claim and
  // retry; its readers (listing and counting queued rows) use deliveries_webhook_due.
  `
  DROP INDEX deliveries_due;
  `,
  // 10: ordered webhooks (issue 28): an object's deliveries to one are sent one at a time, in
  // the order its changes were committed.
  `
  ALTER TABLE webhooks ADD COLUMN ordered INTEGER NOT NULL DEFAULT 0;
  `,
];
