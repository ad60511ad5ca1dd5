import { ConfigError } from "../config/errors.ts";

export type DatabaseTarget = { kind: "sqlite"; path: string } | { kind: "postgres"; url: string };

export const DEFAULT_DATABASE_URL = "data/app.db";

/**
 * Reads DATABASE_URL: a plain path or `sqlite:` URL (`sqlite:data/app.db`, `sqlite:///abs/path`,
 * `sqlite::memory:`) means SQLite; `postgres://` or `postgresql://` means PostgreSQL.
 */
export function parseDatabaseUrl(value: string | undefined): DatabaseTarget {
  const raw = value?.trim() || DEFAULT_DATABASE_URL;
  if (/^postgres(ql)?:\/\//i.test(raw)) return { kind: "postgres", url: raw };
  if (/^sqlite:/i.test(raw)) {
    const rest = raw.slice("sqlite:".length);
    const path = rest.startsWith("//") ? rest.slice(2) : rest;
    if (path === "") throw invalid(raw);
    return { kind: "sqlite", path };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) throw invalid(raw);
  return { kind: "sqlite", path: raw };
}

function invalid(raw: string): ConfigError {
  return new ConfigError(
    `DATABASE_URL=${JSON.stringify(raw)} is invalid: expected a file path, sqlite:PATH or postgres://user@host/db`,
  );
}
