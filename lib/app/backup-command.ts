import { resolve } from "node:path";
import { type ArgsDef, type CommandDef, defineCommand } from "citty";
import { rejectUnknown } from "../cli/args.ts";
import { helpMeta } from "../cli/help.ts";
import type { Env } from "../config/env.ts";
import { withoutEmpty } from "../config/env.ts";
import { ConfigError, UsageError } from "../config/errors.ts";
import { parseDatabaseUrl } from "../store/database-url.ts";
import { BackupRefused, type BackupSummary, backupSqlite } from "../store/sqlite/backup.ts";
import { VERSION } from "../version.ts";

const backupArgs: ArgsDef = {
  file: { type: "positional", required: false, description: "the new backup file" },
};

export interface BackupCommandOptions {
  env: Env;
  /** Where the report goes (default: stdout). */
  write?: (text: string) => void;
}

/** `bun run app backup FILE`: a consistent, owner-only copy of the SQLite database. */
export function createBackupCommand(options: BackupCommandOptions): CommandDef {
  return defineCommand({
    meta: helpMeta({
      name: "backup",
      version: VERSION,
      description:
        "Copy the SQLite database to FILE while the app and workers run (owner-only, integrity-checked)",
      notes: [
        "PostgreSQL: use pg_dump and pg_restore (docs/operations.md, Backup and restore).",
        "Exit codes: 0 copied, 1 failed, 2 bad argument, no database, or FILE exists or is refused (a symlink, standard output, a path in /dev or /proc).",
      ],
    }),
    args: backupArgs,
    async run({ args, rawArgs }) {
      rejectUnknown(rawArgs, backupArgs, { maxPositionals: 1 });
      const file = typeof args.file === "string" ? args.file : "";
      if (file === "") throw new UsageError("Give the backup's file name: app backup FILE");
      const env = withoutEmpty(options.env);
      const target = parseDatabaseUrl(env.DATABASE_URL, env.DATABASE_POOL_MAX);
      if (target.kind === "postgres") {
        throw new ConfigError(
          "DATABASE_URL names PostgreSQL: back it up with pg_dump (docs/operations.md, Backup and restore)",
        );
      }
      if (target.path === ":memory:") {
        throw new ConfigError("DATABASE_URL is :memory:: there is no file to back up");
      }
      let summary: BackupSummary;
      try {
        summary = backupSqlite(target.path, file);
      } catch (error) {
        if (error instanceof BackupRefused)
          throw new ConfigError(`Cannot back up: ${error.message}`);
        throw error;
      }
      (options.write ?? ((text) => process.stdout.write(text)))(report(target.path, file, summary));
    },
  });
}

function report(source: string, file: string, summary: BackupSummary): string {
  const megabytes = (summary.bytes / 1_048_576).toFixed(1);
  return [
    `Backed up ${source} to ${file} (${megabytes} MB, mode 600, integrity checked): ` +
      `${summary.webhooks} webhooks, ${summary.deliveries} deliveries, ${summary.pending} still to send.`,
    "To restore: stop the app and every worker, remove the database's -wal and -shm files, copy the",
    `backup in its place (cp ${resolve(file)} ${resolve(source)}), then start them again.`,
    "",
  ].join("\n");
}
