import type { SQL } from "bun";
import { SchemaTooNewError } from "../schema-version.ts";
import { isConnectionError } from "./db.ts";
import { MIGRATIONS } from "./migrations.ts";

/**
 * Whether the PostgreSQL database can take writes now: null, or the one line saying why not. A
 * standby (in recovery) or a read-only default refuses writes; the schema must be this
 * release's. Reads only.
 */
export async function postgresReadiness(sql: SQL): Promise<string | null> {
  let row: { version: number; recovery: boolean; read_only: string } | undefined;
  try {
    [row] = await sql`SELECT
        (SELECT coalesce(max(version), 0)::int FROM schema_migrations) AS version,
        pg_is_in_recovery() AS recovery,
        current_setting('default_transaction_read_only') AS read_only`;
  } catch (error) {
    const message = (error instanceof Error ? error.message : String(error)).split("\n")[0];
    return isConnectionError(error)
      ? `the database is unreachable: ${message}`
      : `the database did not answer: ${message}`;
  }
  if (row === undefined) return "the database did not answer";
  if (row.recovery) return "the server is a standby (in recovery): it takes no writes";
  if (row.read_only === "on") return "the database is read-only (default_transaction_read_only)";
  if (row.version > MIGRATIONS.length) {
    return new SchemaTooNewError(row.version, MIGRATIONS.length).message;
  }
  if (row.version < MIGRATIONS.length) {
    return `its schema is version ${row.version}, this release needs ${MIGRATIONS.length}: restart the process to migrate it`;
  }
  return null;
}

/** A failed call whose cause is the database being away, in one line; null for others. */
export function explainPostgresFailure(error: unknown): string | null {
  if (!isConnectionError(error)) return null;
  const message = (error instanceof Error ? error.message : String(error)).split("\n")[0];
  return `the database is unreachable: ${message}`;
}
