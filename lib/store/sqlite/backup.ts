import { Database } from "bun:sqlite";
import { chmodSync, existsSync, linkSync, lstatSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import {
  standardStream,
  UnsafeTarget,
  type WriteTarget,
  writeTarget,
} from "../../files/write-target.ts";

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
 * at `target`: a reader never sees half a backup, and nothing already at the path (a file, a
 * symlink, a device) is ever replaced or written through.
 */
export function backupSqlite(source: string, target: string): BackupSummary {
  if (!existsSync(source)) throw new BackupRefused(`there is no database at ${source}`);
  refuseTarget(target);
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

/**
 * A backup is a new regular file: not standard output (binary in a terminal or a pipe, beside
 * the report), nothing in /dev, /proc or /sys, and nothing already at the path, a symlink
 * included, dangling or not (link() would refuse it later, with a less useful message).
 */
function refuseTarget(target: string): void {
  if (standardStream(target) !== undefined) {
    throw new BackupRefused(
      `${target} is a standard stream: a backup is written to a new file of its own`,
    );
  }
  let found: WriteTarget;
  try {
    found = writeTarget(target);
  } catch (error) {
    if (error instanceof UnsafeTarget) throw new BackupRefused(`${target} ${error.message}`);
    throw error;
  }
  if (lstatSync(target, { throwIfNoEntry: false }) !== undefined || found.kind !== "file") {
    throw new BackupRefused(`${target} exists: give a new file name (a backup never replaces one)`);
  }
  if (!existsSync(dirname(target))) {
    throw new BackupRefused(`the folder ${dirname(target)} does not exist`);
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
