import type { Logger } from "../log.ts";
import type { Store } from "../webhooks/ports.ts";
import type { DatabaseTarget } from "./database-url.ts";
import { DEFAULT_CONNECTIONS, type ProcessRole } from "./postgres/budget.ts";
import { openPostgresStore } from "./postgres/store.ts";
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
}

/** How long a one-shot command waits for a full or unreachable server before it fails. */
const COMMAND_STARTUP_WAIT_MS = 15_000;

/** Opens the store DATABASE_URL names (see parseDatabaseUrl), migrating it on open. */
export async function openStore(
  target: DatabaseTarget,
  options: OpenStoreOptions = {},
): Promise<Store> {
  if (target.kind === "sqlite") {
    return openSqliteStore(target.path, {
      now: options.now,
      pollMs: options.pollMs,
      warn: options.logger ? (message) => options.logger?.warn(message) : undefined,
    });
  }
  const role = options.role ?? "command";
  return openPostgresStore(target.url, {
    now: options.now,
    logger: options.logger,
    connections: target.poolMax ?? DEFAULT_CONNECTIONS[role],
    waitsForWork: role === "worker",
    // Servers wait for the database as long as it takes; a command gives up and says why.
    startup: {
      signal: options.signal,
      giveUpAfterMs: role === "command" ? COMMAND_STARTUP_WAIT_MS : undefined,
    },
  });
}
