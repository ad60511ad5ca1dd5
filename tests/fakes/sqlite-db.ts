import type { Database } from "bun:sqlite";
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
