import { ConfigError } from "../config/errors.ts";
import type { Logger } from "../log.ts";
import type { Store } from "../webhooks/ports.ts";
import { type DatabaseTarget, postgresAddress } from "./database-url.ts";
import { DEFAULT_CONNECTIONS, type ProcessRole, StartupTimeoutError } from "./postgres/budget.ts";
import { openPostgresStore } from "./postgres/store.ts";
import { SchemaTooNewError } from "./schema-version.ts";
import { explainSqliteFailure } from "./sqlite/failure.ts";
import { openSqliteStore } from "./sqlite/store.ts";

export interface OpenStoreOptions {
  /** Clock for stored timestamps; tests pass a fake one. */
  now?: () => number;
  /** SQLite: how often waitForChange polls `PRAGMA data_version` (ms). */
  pollMs?: number;
  logger?: Pick<Logger, "warn" | "info">;
  /** Sets the default connection budget on PostgreSQL (budget.ts); default "command". */
  role?: ProcessRole;
  /** PostgreSQL start-up: stop retrying a full or unreachable server when this aborts. */
  signal?: AbortSignal;
  /**
   * A run that ends by itself (a CLI command, `worker --once`): waits at most 5 s for a full,
   * unreachable or silent PostgreSQL, then fails. Default: only the "command" role; servers wait
   * until stopped.
   */
  oneShot?: boolean;
  /** What named the database, for a start-up error: `DATABASE_URL` (default) or `--database-url`. */
  source?: string;
}

/**
 * How long a one-shot run waits for a full, unreachable or silent server before it fails: a
 * person at a prompt or a cron job learns the database is away in seconds, not Bun's 30 s
 * connection timeout.
 */
const ONE_SHOT_STARTUP_WAIT_MS = 5_000;

/**
 * Opens the store DATABASE_URL names (see parseDatabaseUrl), migrating it on open. A database
 * that cannot be opened or reached is a one-line ConfigError (exit 2) naming the variable and
 * the file or the server, never the password.
 */
export async function openStore(
  target: DatabaseTarget,
  options: OpenStoreOptions = {},
): Promise<Store> {
  try {
    return await openTarget(target, options);
  } catch (error) {
    throw explainOpenFailure(error, target, options.source ?? "DATABASE_URL") ?? error;
  }
}

async function openTarget(target: DatabaseTarget, options: OpenStoreOptions): Promise<Store> {
  if (target.kind === "sqlite") {
    return openSqliteStore(target.path, {
      synchronous: target.synchronous,
      now: options.now,
      pollMs: options.pollMs,
      warn: options.logger ? (message) => options.logger?.warn(message) : undefined,
      backgroundCheckpoints: options.role === "app",
      yieldWhenBusy: options.role === "app",
    });
  }
  const role = options.role ?? "command";
  return openPostgresStore(target.url, {
    now: options.now,
    logger: options.logger,
    connections: target.poolMax ?? DEFAULT_CONNECTIONS[role],
    waitsForWork: role === "worker",
    // Servers wait for the database as long as it takes; a one-shot run gives up and says why.
    startup: {
      signal: options.signal,
      giveUpAfterMs: (options.oneShot ?? role === "command") ? ONE_SHOT_STARTUP_WAIT_MS : undefined,
    },
  });
}

/** The ConfigError for a database that cannot be opened, or null for any other failure. */
export function explainOpenFailure(
  error: unknown,
  target: DatabaseTarget,
  source: string,
): ConfigError | null {
  const { name, code, message } = error as { name?: string; code?: string; message?: string };
  if (error instanceof SchemaTooNewError) {
    const where = target.kind === "sqlite" ? `=${JSON.stringify(target.path)}` : "";
    const what =
      target.kind === "sqlite" ? "SQLite database" : `PostgreSQL at ${postgresAddress(target.url)}`;
    return new ConfigError(`${source}${where}: cannot use the ${what}: ${error.message}`);
  }
  if (target.kind === "sqlite") {
    const reason = explainSqliteFailure(error, target.path, { atOpen: true });
    if (reason === null) return null;
    return new ConfigError(
      `${source}=${JSON.stringify(target.path)}: cannot open the SQLite database: ${reason}`,
    );
  }
  const silent = error instanceof StartupTimeoutError;
  if (!silent && name !== "PostgresError" && !String(code ?? "").startsWith("ERR_POSTGRES")) {
    return null;
  }
  const reason =
    code === "ERR_POSTGRES_CONNECTION_REFUSED"
      ? "connection refused or host not reachable"
      : (message ?? String(error)).split("\n")[0];
  return new ConfigError(
    `${source}: cannot use PostgreSQL at ${postgresAddress(target.url)}: ${reason}`,
  );
}

/**
 * The ConfigError for a command's write that failed because of the database's file or disk (a
 * full disk, a file made read-only meanwhile), or null for any other failure.
 */
export function explainWriteFailure(
  error: unknown,
  target: DatabaseTarget,
  source: string,
): ConfigError | null {
  if (target.kind !== "sqlite") return null;
  const reason = explainSqliteFailure(error, target.path);
  if (reason === null) return null;
  return new ConfigError(
    `${source}=${JSON.stringify(target.path)}: cannot write the SQLite database: ${reason}`,
  );
}
