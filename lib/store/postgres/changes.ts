import { SQL } from "bun";
import { abortableSleep } from "../../async/sleep.ts";
import type { Logger } from "../../log.ts";
import { errorMessage } from "../../text/error-message.ts";
import { urlOptions } from "./db.ts";

/** The NOTIFY channel that enqueue, retry and release signal on (delivered at commit). */
export const CHANGE_CHANNEL = "webhook_deliveries";

/**
 * Wakes waiting workers when another connection or process may have queued work. A dedicated
 * connection LISTENs on CHANGE_CHANNEL, opened by the first `wait()` (processes that never wait,
 * such as the app server, hold no extra connection). While it is down, waits are cut to
 * `pollIntervalMs` (polling) and it reconnects in the background with a capped backoff.
 *
 * Notifications are counted; `markSeen()` (called when a claim starts) records the count the
 * claimer has seen, and `wait()` returns at once when more arrived since: a notification landing
 * between a claim and the next wait is never missed. (Re)connecting counts as a notification,
 * since whatever was sent while nobody listened is lost.
 */
export interface ChangeListener {
  /** True while the LISTEN connection is up. */
  readonly listening: boolean;
  markSeen(): void;
  wait(options: { timeoutMs: number; signal?: AbortSignal }): Promise<void>;
  close(): Promise<void>;
}

export interface ChangeListenerOptions {
  channel?: string;
  /** Longest wait while the LISTEN connection is down. */
  pollIntervalMs?: number;
  /** Reconnect backoff: doubles from `minMs` up to `maxMs`. */
  reconnect?: { minMs?: number; maxMs?: number };
  logger?: Pick<Logger, "warn" | "info">;
  /** Told each time the LISTEN connection is (re-)established: the database answers. */
  onConnected?: () => void;
}

export function createChangeListener(
  url: string,
  options: ChangeListenerOptions = {},
): ChangeListener {
  const channel = options.channel ?? CHANGE_CHANNEL;
  const pollIntervalMs = options.pollIntervalMs ?? 200;
  const minBackoff = options.reconnect?.minMs ?? 50;
  const maxBackoff = options.reconnect?.maxMs ?? 2000;
  const logger = options.logger;

  let generation = 0;
  let seen = 0;
  let listening = false;
  let started = false;
  let closed = false;
  let connection: SQL | null = null;
  /** The client of the attempt under way, closed by close() so that it ends at once. */
  let attempt: SQL | null = null;
  let connecting: Promise<void> | null = null;
  const waiters = new Set<() => void>();
  const stop = new AbortController();

  function bump(): void {
    generation += 1;
    for (const wake of waiters) wake();
  }

  // Each attempt gets a client of its own, so we learn when exactly its connection drops. Bun
  // would re-LISTEN by itself, but with a backoff that grows to many seconds: we do it instead.
  async function connectOnce(): Promise<void> {
    let dropped = false;
    const client: SQL = new SQL(url, {
      ...urlOptions(url),
      max: 1,
      connectionTimeout: 5,
      onclose: () => {
        if (dropped || client !== connection) return;
        dropped = true;
        onDrop(client);
      },
    });
    attempt = client;
    try {
      await client.listen(channel, bump);
    } catch (error) {
      dropped = true;
      await client.close({ timeout: 0 }).catch(() => {});
      throw error;
    } finally {
      attempt = null;
    }
    if (closed) {
      await client.close({ timeout: 0 }).catch(() => {});
      return;
    }
    connection = client;
    listening = true;
  }

  async function connectLoop(): Promise<void> {
    let delay = minBackoff;
    for (let tries = 0; !closed; tries++) {
      try {
        await connectOnce();
        if (tries > 0 || generation > 0) logger?.info("PostgreSQL LISTEN connection established");
        options.onConnected?.();
        bump();
        return;
      } catch (error) {
        if (tries === 0) {
          const reason = errorMessage(error);
          logger?.warn(`PostgreSQL LISTEN failed (${reason}): polling until it works`);
        }
        await abortableSleep(delay, stop.signal);
        delay = Math.min(delay * 2, maxBackoff);
      }
    }
  }

  function reconnect(): void {
    connecting ??= connectLoop().finally(() => {
      connecting = null;
    });
  }

  function onDrop(client: SQL): void {
    listening = false;
    connection = null;
    client.close({ timeout: 0 }).catch(() => {});
    if (closed) return;
    logger?.warn("PostgreSQL LISTEN connection lost: polling until it is back");
    bump(); // waiters switch to polling now rather than at their (possibly long) timeout
    reconnect();
  }

  return {
    get listening() {
      return listening;
    },
    markSeen() {
      seen = generation;
    },
    wait({ timeoutMs, signal }) {
      if (!started && !closed) {
        started = true;
        reconnect();
      }
      if (closed || signal?.aborted || timeoutMs <= 0 || generation !== seen) {
        seen = generation;
        return Promise.resolve();
      }
      const limit = listening ? timeoutMs : Math.min(timeoutMs, pollIntervalMs);
      return new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          waiters.delete(done);
          signal?.removeEventListener("abort", done);
          seen = generation;
          resolve();
        };
        const timer = setTimeout(done, limit);
        waiters.add(done);
        signal?.addEventListener("abort", done, { once: true });
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      stop.abort();
      bump();
      const client = connection;
      connection = null;
      listening = false;
      await client?.close({ timeout: 0 }).catch(() => {});
      // A LISTEN still connecting (a slow or loaded server) is cut rather than waited for.
      await attempt?.close({ timeout: 0 }).catch(() => {});
      await connecting;
    },
  };
}

/**
 * A ChangeListener that holds no connection: every wait lasts at most `pollIntervalMs`. For a
 * process whose connection budget has no room for LISTEN.
 */
export function createPollingListener(pollIntervalMs: number): ChangeListener {
  let closed = false;
  return {
    listening: false,
    markSeen() {},
    wait({ timeoutMs, signal }) {
      if (closed) return Promise.resolve();
      return abortableSleep(Math.min(timeoutMs, pollIntervalMs), signal ?? neverAborted);
    },
    async close() {
      closed = true;
    },
  };
}

const neverAborted = new AbortController().signal;
