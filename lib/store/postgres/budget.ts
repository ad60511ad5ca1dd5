import { abortableSleep, type Sleep } from "../../async/sleep.ts";
import type { Logger } from "../../log.ts";
import { errorMessage } from "../../text/error-message.ts";
import { isConnectionError } from "./db.ts";

/** What a process does with its connections decides how many it needs by default. */
export type ProcessRole = "worker" | "app" | "command";

/**
 * Connections per process unless DATABASE_POOL_MAX or the URL's `max=` says otherwise. A worker
 * writes claims and results in batches, so 3 pooled connections plus its LISTEN connection keep
 * it busy; the app serves people, not a queue; a one-shot command runs one statement at a time.
 */
export const DEFAULT_CONNECTIONS: Readonly<Record<ProcessRole, number>> = {
  worker: 4,
  app: 4,
  command: 1,
};

/** The --help line for DATABASE_POOL_MAX of a command in `role`. */
export function poolMaxHelp(role: ProcessRole): { name: string; description: string } {
  return {
    name: "DATABASE_POOL_MAX",
    description: `PostgreSQL connections this process may open, LISTEN included; the URL's max= wins [default ${DEFAULT_CONNECTIONS[role]}]`,
  };
}

export interface ConnectionPlan {
  /** Connections of the query pool. */
  pool: number;
  /** Whether waiting for work may open a LISTEN connection (else it polls). */
  listen: boolean;
}

/**
 * Spends a process's budget: a process that waits for work gives one connection to LISTEN
 * when it has two or more; with one, that one serves queries and waiting becomes polling.
 */
export function planConnections(budget: number, waitsForWork: boolean): ConnectionPlan {
  if (!waitsForWork || budget < 2) return { pool: Math.max(1, budget), listen: false };
  return { pool: budget - 1, listen: true };
}

/** PostgreSQL's too_many_connections: max_connections, or a role's or database's limit. */
export function isServerFull(error: unknown): boolean {
  return (error as { errno?: unknown } | null)?.errno === "53300";
}

export interface StartupRetryOptions {
  /** Stop retrying (the process was asked to stop); the last error is thrown. */
  signal?: AbortSignal;
  /**
   * Give up after this long (a one-shot command), a connection attempt still waiting included
   * (a server that accepts and never answers); absent: until `signal` aborts.
   */
  giveUpAfterMs?: number;
  /** Backoff: doubles from `minMs` up to `maxMs`. */
  minMs?: number;
  maxMs?: number;
  logger?: Pick<Logger, "warn" | "info">;
  sleep?: Sleep;
  /** The server, for the waiting line: `host:port/database as user`, never the password. */
  where?: string;
}

/**
 * Runs `connect` until it succeeds, retrying with a capped backoff while the server is full or
 * unreachable, so twenty workers started against `max_connections` wait their turn instead of
 * exiting into a crash loop. One line when it starts waiting and one when it got through.
 */
export async function retryStartup<T>(
  connect: () => Promise<T>,
  options: StartupRetryOptions = {},
): Promise<T> {
  const minMs = options.minMs ?? 250;
  // Short enough that a process waiting at start-up follows the database back within 2 s.
  const maxMs = options.maxMs ?? 2000;
  const sleep = options.sleep ?? abortableSleep;
  const signal = options.signal ?? new AbortController().signal;
  const started = performance.now();
  let delay = minMs;
  for (let tries = 0; ; tries++) {
    try {
      const attempt = connect();
      const result =
        options.giveUpAfterMs === undefined
          ? await attempt
          : await withinStartupWait(attempt, started, options.giveUpAfterMs);
      if (tries > 0) {
        const seconds = ((performance.now() - started) / 1000).toFixed(1);
        options.logger?.info(`PostgreSQL connected after ${seconds} s`);
      }
      return result;
    } catch (error) {
      const full = isServerFull(error);
      const elapsed = performance.now() - started;
      const givingUp =
        signal.aborted ||
        (!full && !isConnectionError(error)) ||
        (options.giveUpAfterMs !== undefined && elapsed + delay > options.giveUpAfterMs);
      if (givingUp) throw error;
      if (tries === 0) options.logger?.warn(waitingMessage(error, full, options.where));
      await sleep(delay, signal);
      delay = Math.min(delay * 2, maxMs);
    }
  }
}

/** A server that took the connection but did not answer within a one-shot run's start-up wait. */
export class StartupTimeoutError extends Error {
  constructor(waitMs: number) {
    super(`the server did not answer within ${waitMs / 1000} s`);
    this.name = "StartupTimeoutError";
  }
}

/** `attempt`, or a StartupTimeoutError once `waitMs` from `started` have passed. */
function withinStartupWait<T>(attempt: Promise<T>, started: number, waitMs: number): Promise<T> {
  // The attempt may still fail after the deadline: nobody is waiting for it any more.
  attempt.catch(() => {});
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    const left = Math.max(0, started + waitMs - performance.now());
    timer = setTimeout(() => reject(new StartupTimeoutError(waitMs)), left);
  });
  return Promise.race([attempt, deadline]).finally(() => clearTimeout(timer));
}

function waitingMessage(error: unknown, full: boolean, where: string | undefined): string {
  const reason = errorMessage(error);
  const server = where === undefined ? "PostgreSQL" : `PostgreSQL at ${where}`;
  return full
    ? `${server} has no free connection (${reason}): retrying with backoff. Lower DATABASE_POOL_MAX or raise max_connections; see docs/storage-and-postgres.md for the budget`
    : `${server} unreachable (${reason}): retrying with backoff`;
}
