import type { Database } from "bun:sqlite";
import { afterEach } from "bun:test";
import { openSqlite } from "../../lib/store/sqlite/connection.ts";
import { createSqliteStore } from "../../lib/store/sqlite/store.ts";
import type { Store } from "../../lib/webhooks/ports.ts";

/** A migrated SQLite database and the real store on top. `path` defaults to :memory:. */
export function openSqliteDb(options: { path?: string; now?: () => number } = {}): {
  db: Database;
  store: Store;
} {
  const db = openSqlite(options.path ?? ":memory:");
  return { db, store: createSqliteStore(db, { now: options.now }) };
}

/**
 * Writes `count` deliveries of webhook 1 ("erp", made here) in `state`, one a millisecond from
 * `from`, straight into the tables: a queue as large as a bulk retry or replay sees, in one
 * transaction.
 */
export function insertDeliveries(
  db: Database,
  options: { count: number; state: "failed" | "successful"; from: number },
): void {
  db.run(
    "INSERT INTO webhooks (id, name, url, created_at, updated_at) VALUES (1, 'erp', 'https://erp.example/h', 0, 0)",
  );
  const insert = db.prepare(
    `INSERT INTO deliveries (webhook_id, message_id, event, state, attempts, next_attempt_at,
       created_at, updated_at, completed_at)
     VALUES (1, ?1, 'item.created', ?3, 1, ?2, ?2, ?2, ?2)`,
  );
  db.transaction(() => {
    for (let i = 0; i < options.count; i++) insert.run(`msg_${i}`, options.from + i, options.state);
  })();
}

/**
 * For a file or describe: openSqliteDb() whose stores are closed after each test, so a test's
 * setup opens as many as it needs and closes none.
 */
export function useSqliteDbs(): typeof openSqliteDb {
  const opened: Store[] = [];
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });
  return (options) => {
    const db = openSqliteDb(options);
    opened.push(db.store);
    return db;
  };
}
