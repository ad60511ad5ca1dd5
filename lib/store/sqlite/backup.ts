import { Database } from "bun:sqlite";
import { chmodSync, existsSync, linkSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";

export interface BackupSummary {
  bytes: number;
  webhooks: number;
  deliveries: number;
  /** Deliveries still to send (queued or being delivered) when the copy was taken. */
  pending: number;
}

/** Why a backup cannot be made where asked: a one-line reason for the person who asked. */
export class BackupRefused extends Error {
  override name = "BackupRefused";
}

/**
 * Copies a live SQLite database to `target` with `VACUUM INTO`: one read transaction, so the
 * copy is one consistent moment even while the app and workers write (copying the file and its
 * WAL by hand is not). The copy is written in a private folder beside the target, checked with
 * `PRAGMA integrity_check`, made owner-only (it holds every webhook secret) and only then linked
 * at `target`: a reader never sees half a backup, and an existing file is never replaced.
 */
export function backupSqlite(source: string, target: string): BackupSummary {
  if (!existsSync(source)) throw new BackupRefused(`there is no database at ${source}`);
  if (existsSync(target)) {
    throw new BackupRefused(`${target} exists: give a new file name (a backup never replaces one)`);
  }
  if (!existsSync(dirname(target))) {
    throw new BackupRefused(`the folder ${dirname(target)} does not exist`);
  }
  const scratch = mkdtempSync(join(dirname(target), `.${basename(target)}.`));
  const copy = join(scratch, "backup.db");
  try {
    const db = new Database(source, { readonly: false, strict: true });
    try {
      db.run("PRAGMA busy_timeout = 5000");
      db.prepare("VACUUM INTO ?").run(copy);
    } finally {
      db.close();
    }
    chmodSync(copy, 0o600);
    const summary = checkCopy(copy);
    // link() fails if the target appeared meanwhile, where rename() would replace it.
    linkSync(copy, target);
    return summary;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function checkCopy(path: string): BackupSummary {
  const db = new Database(path, { readonly: true, strict: true });
  try {
    const check = db.query<{ integrity_check: string }, []>("PRAGMA integrity_check").all();
    const verdict = check.map((row) => row.integrity_check).join("; ");
    if (verdict !== "ok") throw new Error(`The backup failed its integrity check: ${verdict}`);
    const count = (sql: string) => db.query<{ n: number }, []>(sql).get()?.n ?? 0;
    return {
      bytes: statSync(path).size,
      webhooks: count("SELECT count(*) AS n FROM webhooks"),
      deliveries: count("SELECT count(*) AS n FROM deliveries"),
      pending: count(
        "SELECT count(*) AS n FROM deliveries WHERE state IN ('queued', 'delivering')",
      ),
    };
  } finally {
    db.close();
  }
}
