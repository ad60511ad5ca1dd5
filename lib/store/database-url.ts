import { resolve } from "node:path";
import { ConfigError } from "../config/errors.ts";

export type DatabaseTarget =
  /** `synchronous`: FULL when the URL asks (`sqlite:PATH?synchronous=full`); NORMAL otherwise. */
  | { kind: "sqlite"; path: string; synchronous?: SqliteSynchronous }
  /** `poolMax`: the connections this process may open, when the URL or DATABASE_POOL_MAX says. */
  | { kind: "postgres"; url: string; poolMax?: number };

/** The most connections one process may be given (PostgreSQL's own default limit is 100). */
export const MAX_POOL = 1000;

export const DEFAULT_DATABASE_URL = "data/app.db";

/** SQLite's durability setting: NORMAL (the default) or FULL (every commit synced to disk). */
export type SqliteSynchronous = "NORMAL" | "FULL";

/**
 * Reads DATABASE_URL: a plain path or `sqlite:` URL (`sqlite:data/app.db`, `sqlite:///abs/path`,
 * `sqlite::memory:`) means SQLite, `?synchronous=full` on a `sqlite:` URL syncs every commit;
 * `postgres://` or `postgresql://` means PostgreSQL. Its connection budget is the URL's `max=`
 * or else `poolMax` (DATABASE_POOL_MAX).
 */
export function parseDatabaseUrl(
  value: string | undefined,
  poolMax?: string | undefined,
): DatabaseTarget {
  const raw = value?.trim() || DEFAULT_DATABASE_URL;
  // Checked whatever the backend, so a typo is caught before it matters.
  const fromEnv = poolMax?.trim() ? parseBudget(poolMax.trim(), "DATABASE_POOL_MAX") : undefined;
  if (/^postgres(ql)?:\/\//i.test(raw)) {
    const fromUrl = urlMax(raw);
    const budget = fromUrl === null ? fromEnv : parseBudget(fromUrl, "DATABASE_URL max");
    return budget === undefined
      ? { kind: "postgres", url: raw }
      : { kind: "postgres", url: raw, poolMax: budget };
  }
  if (/^sqlite:/i.test(raw)) {
    const [rest = "", query] = raw.slice("sqlite:".length).split(/\?(.*)/s);
    const path = rest.startsWith("//") ? rest.slice(2) : rest;
    if (path === "") throw invalid(raw);
    if (query === undefined) return { kind: "sqlite", path };
    return { kind: "sqlite", path, synchronous: synchronousOf(query, raw) };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) throw invalid(raw);
  return { kind: "sqlite", path: raw };
}

/** `synchronous=normal|full`, the one setting a `sqlite:` URL takes. */
function synchronousOf(query: string, raw: string): SqliteSynchronous {
  const match = /^synchronous=(normal|full)$/i.exec(query);
  if (match?.[1]) return match[1].toUpperCase() as SqliteSynchronous;
  throw new ConfigError(
    `DATABASE_URL=${JSON.stringify(raw)} is invalid: a sqlite: URL takes only ?synchronous=normal or ?synchronous=full`,
  );
}

/** The `max` query parameter, which Bun's client reads as its pool size. */
function urlMax(raw: string): string | null {
  try {
    return new URL(raw).searchParams.get("max");
  } catch {
    return null;
  }
}

function parseBudget(value: string, name: string): number {
  const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (Number.isSafeInteger(n) && n >= 1 && n <= MAX_POOL) return n;
  throw new ConfigError(
    `${name}=${JSON.stringify(value)} is invalid: expected a whole number from 1 to ${MAX_POOL} (connections per process)`,
  );
}

function invalid(raw: string): ConfigError {
  return new ConfigError(
    `DATABASE_URL=${JSON.stringify(withoutPassword(raw))} is invalid: expected a file path, sqlite:PATH or postgres://user@host/db`,
  );
}

/** `scheme://user:secret@host` shown as `scheme://user:***@host`: a message never carries a password. */
export function withoutPassword(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*):[^@/]*@/i, "$1:***@");
}

/** `host:port/database as user` of a postgres:// URL, without the password: for messages. */
export function postgresAddress(url: string): string {
  try {
    const parsed = new URL(url);
    const database = parsed.pathname.replace(/^\//, "") || "(default database)";
    const user = parsed.username ? ` as ${decodeURIComponent(parsed.username)}` : "";
    return `${parsed.hostname}:${parsed.port || "5432"}/${database}${user}`;
  } catch {
    return "the address in it";
  }
}

/**
 * The database a process uses, for its start line: `SQLite /abs/path/app.db` (absolute, so a
 * command run from the wrong folder shows it opened another file) or `PostgreSQL host:port/db as
 * user` (never the password).
 */
export function describeDatabase(target: DatabaseTarget): string {
  if (target.kind === "postgres") return `PostgreSQL ${postgresAddress(target.url)}`;
  return `SQLite ${target.path === ":memory:" ? target.path : resolve(target.path)}`;
}
