import type { Database } from "bun:sqlite";
import { OPS_MIGRATION_SQLITE } from "../../lib/store/ops-migration-sql.ts";
import { openSqlite } from "../../lib/store/sqlite/connection.ts";
import { createSqliteStore } from "../../lib/store/sqlite/store.ts";
import type { Store } from "../../lib/webhooks/ports.ts";

/**
 * A SQLite database with migration 1 (openSqlite) and the proposed migration 2 applied, as the
 * integrator will apply it, and the real store on top. `path` defaults to :memory:.
 */
export function openOpsDb(options: { path?: string; now?: () => number } = {}): {
  db: Database;
  store: Store;
} {
  const db = openSqlite(options.path ?? ":memory:");
  applyOpsMigration(db);
  return { db, store: createSqliteStore(db, { now: options.now }) };
}

/** Applies migration 2 unless the store's own list already did (after the integration). */
export function applyOpsMigration(db: Database): void {
  db.transaction(() => {
    const { user_version } = db.query("PRAGMA user_version").get() as { user_version: number };
    if (user_version >= 2) return;
    db.run(OPS_MIGRATION_SQLITE);
    db.run("PRAGMA user_version = 2");
  }).immediate();
}
