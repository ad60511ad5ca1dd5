import type { Database } from "bun:sqlite";
import { dirname } from "node:path";
import { SchemaTooNewError } from "../schema-version.ts";
import { explainSqliteFailure, freeSpace } from "./failure.ts";
import { MIGRATIONS } from "./schema/migrations.ts";

/** Below this much free space the database is not ready: the next write may fail. */
const LOW_SPACE_BYTES = 1_048_576;

/**
 * Whether the SQLite database can take writes now: null, or the one line saying why not. The
 * write probe takes the write lock and rewrites the schema version to itself, then rolls back:
 * a read-only file (which SQLite opens read-only without a word) fails it, and nothing reaches
 * the disk. A full disk shows only at a commit, so the free space is read instead. Throws
 * SQLITE_BUSY (another writer holds the lock) for the caller to wait its turn.
 */
export function sqliteReadiness(
  db: Database,
  options: { freeBytes?: (folder: string) => number | null } = {},
): string | null {
  const path = db.filename;
  let version: number;
  try {
    db.run("BEGIN IMMEDIATE");
    try {
      version = (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
      db.run(`PRAGMA user_version = ${version}`);
    } finally {
      db.run("ROLLBACK");
    }
  } catch (error) {
    // Another writer holds the lock: the caller waits its turn (the store retries while busy).
    if (String((error as { code?: unknown }).code ?? "").startsWith("SQLITE_BUSY")) throw error;
    return (
      explainSqliteFailure(error, path) ?? `the database did not take a write: ${String(error)}`
    );
  }
  if (version > MIGRATIONS.length) return new SchemaTooNewError(version, MIGRATIONS.length).message;
  if (version < MIGRATIONS.length) {
    return `its schema is version ${version}, this release needs ${MIGRATIONS.length}: restart the process to migrate it`;
  }
  if (path === "" || path === ":memory:") return null;
  const folder = dirname(path);
  const free = (options.freeBytes ?? freeSpace)(folder);
  if (free !== null && free < LOW_SPACE_BYTES) {
    return `the disk holding ${folder} is nearly full (${Math.floor(free / 1024)} KiB free): free some space there (df -h ${folder})`;
  }
  return null;
}
