import type { Logger } from "../log.ts";
import type { Store } from "../webhooks/ports.ts";
import type { DatabaseTarget } from "./database-url.ts";
import { openPostgresStore } from "./postgres/store.ts";
import { openSqliteStore } from "./sqlite/store.ts";

export interface OpenStoreOptions {
  /** Clock for stored timestamps; tests pass a fake one. */
  now?: () => number;
  /** SQLite: how often waitForChange polls `PRAGMA data_version` (ms). */
  pollMs?: number;
  logger?: Pick<Logger, "warn" | "info">;
}

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
  return openPostgresStore(target.url, { now: options.now, logger: options.logger });
}
