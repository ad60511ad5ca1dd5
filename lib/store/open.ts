import { ConfigError } from "../config/errors.ts";
import type { DatabaseTarget } from "./database-url.ts";
import { openSqliteStore, type SqliteStoreOptions } from "./sqlite/store.ts";
import type { Store } from "./types.ts";

export type OpenStoreOptions = SqliteStoreOptions;

/** Opens the store DATABASE_URL names (see parseDatabaseUrl), migrating it on open. */
export async function openStore(
  target: DatabaseTarget,
  options: OpenStoreOptions = {},
): Promise<Store> {
  if (target.kind === "sqlite") return openSqliteStore(target.path, options);
  throw new ConfigError(
    "DATABASE_URL names PostgreSQL, which is not available yet: use a SQLite path such as data/app.db",
  );
}
