import type { SQL, TransactionSQL } from "bun";

/**
 * What a repository is bound to: the connection pool, or one transaction of the caller's
 * (`store.transaction(fn)`). Repositories write through `atomic`/`isolated` so the same code is
 * its own transaction on the pool and joins the caller's inside one.
 */
export interface Db {
  readonly sql: SQL;
  readonly inTransaction: boolean;
  /** Runs `fn` atomically: a transaction of its own on the pool, part of the caller's otherwise. */
  atomic<T>(fn: (sql: SQL) => Promise<T>): Promise<T>;
  /**
   * Like `atomic`, but inside a caller's transaction in a savepoint: an expected failure (a
   * duplicate name) then leaves the caller's transaction usable, as a failed statement does on
   * SQLite, instead of aborting it.
   */
  isolated<T>(fn: (sql: SQL) => Promise<T>): Promise<T>;
  /** Told of a connection error a repository retries through (the database may be down). */
  connectionLost?(error: unknown): void;
}

export function poolDb(sql: SQL, connectionLost?: (error: unknown) => void): Db {
  const atomic = <T>(fn: (sql: SQL) => Promise<T>) => sql.begin((tx) => fn(tx)) as Promise<T>;
  return { sql, inTransaction: false, atomic, isolated: atomic, connectionLost };
}

export function transactionDb(tx: TransactionSQL): Db {
  return {
    sql: tx,
    inTransaction: true,
    atomic: (fn) => fn(tx),
    isolated: <T>(fn: (sql: SQL) => Promise<T>) => tx.savepoint((sp) => fn(sp)) as Promise<T>,
  };
}

/**
 * Options that make the URL authoritative: Bun lets `PGDATABASE` override the database a URL
 * names, so a stray variable could point a worker at another database than DATABASE_URL says.
 */
export function urlOptions(url: string): { database?: string } {
  let path = "";
  try {
    path = new URL(url).pathname.replace(/^\//, "");
  } catch {
    return {};
  }
  return path === "" ? {} : { database: decodeURIComponent(path) };
}

/** int8 columns arrive as strings (to keep precision); ours are ids and epoch ms, safe as numbers. */
export function toNumber(value: string | number): number {
  return typeof value === "number" ? value : Number(value);
}

export function toNumberOrNull(value: string | number | null): number | null {
  return value === null ? null : toNumber(value);
}

/** The server's SQLSTATE and constraint name of a failed statement, when it has them. */
export function isUniqueViolation(error: unknown, constraint: string): boolean {
  const fields = error as { errno?: unknown; constraint?: unknown } | null;
  return fields?.errno === "23505" && fields.constraint === constraint;
}

/**
 * Errors that mean the connection, not the statement, failed: the server is down, restarting
 * or unreachable. Such a statement either never ran or ran in a transaction that did not commit,
 * unless the link broke while the COMMIT's answer was on its way.
 */
export function isConnectionError(error: unknown): boolean {
  const fields = error as { code?: unknown; errno?: unknown } | null;
  const code = typeof fields?.code === "string" ? fields.code : "";
  const errno = typeof fields?.errno === "string" ? fields.errno : "";
  return (
    code === "ERR_POSTGRES_CONNECTION_CLOSED" ||
    code === "ERR_POSTGRES_CONNECTION_REFUSED" ||
    code === "ERR_POSTGRES_CONNECTION_TIMEOUT" ||
    code === "ERR_POSTGRES_IDLE_TIMEOUT" ||
    errno.startsWith("08") || // connection exception
    errno === "57P01" || // admin_shutdown
    errno === "57P02" || // crash_shutdown
    errno === "57P03" || // cannot_connect_now (starting up)
    errno === "53300" // too_many_connections: no connection could be opened
  );
}
