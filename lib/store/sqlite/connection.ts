import { Database } from "bun:sqlite";
import type { SqliteSynchronous } from "../database-url.ts";
import { prepareDatabaseFile, type Warn } from "./file-safety.ts";
import { migrate } from "./schema/migrate.ts";

/**
 * Opens (creating file and folder) and migrates a SQLite database set up for a queue shared by
 * several processes: WAL so readers never block the writer, busy_timeout so writers wait for
 * each other instead of failing, synchronous=NORMAL which is durable across crashes of the
 * process in WAL mode (FULL, when asked, across a power loss too), and foreign keys on. temp_store=MEMORY: the journal of a savepoint (an
 * enqueue joining the caller's transaction) is otherwise a temporary file created and removed
 * at every transaction. A new file and folder are created owner-only (prepareDatabaseFile).
 */
export function openSqlite(
  path: string,
  options: { warn?: Warn; synchronous?: SqliteSynchronous } = {},
): Database {
  if (path !== ":memory:") {
    prepareDatabaseFile(path, options.warn ?? ((message) => process.stderr.write(`${message}\n`)));
  }
  const db = new Database(path, { create: true, strict: true });
  db.run("PRAGMA busy_timeout = 5000");
  db.run("PRAGMA journal_mode = WAL");
  db.run(`PRAGMA synchronous = ${options.synchronous === "FULL" ? "FULL" : "NORMAL"}`);
  db.run("PRAGMA foreign_keys = ON");
  db.run("PRAGMA temp_store = MEMORY");
  migrate(db);
  return db;
}
