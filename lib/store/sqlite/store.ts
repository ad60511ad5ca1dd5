import type { Database } from "bun:sqlite";
import { AsyncLocalStorage } from "node:async_hooks";
import type { Repos, Store } from "../../webhooks/ports.ts";
import type { RenderTemplates } from "../../webhooks/rendering/render-process.ts";
import type { SqliteSynchronous } from "../database-url.ts";
import { createSqliteApiTokenRepo } from "./api-tokens.ts";
import { createChangeListener } from "./changes.ts";
import { checkpointInBackground } from "./checkpointer.ts";
import { openSqlite } from "./connection.ts";
import { explainSqliteFailure } from "./failure.ts";
import { fileChange, fileIdentity } from "./file-safety.ts";
import { createSqliteHealthRepo } from "./health.ts";
import { createSqliteIdempotencyKeys } from "./idempotency.ts";
import { createSqliteItemRepo } from "./items.ts";
import { createMutex } from "./mutex.ts";
import { createSqliteEventRepo } from "./operational-events.ts";
import { type AvailabilityWatch, createAvailabilityWatch } from "./queue/availability.ts";
import { createSqliteQueue } from "./queue/index.ts";
import { sqliteReadiness } from "./readiness.ts";
import { createSqliteSessionRevocations } from "./sessions.ts";
import { createSqliteWebhookRepo } from "./webhooks.ts";
import { createSqliteWorkerRegistry } from "./workers.ts";

export interface SqliteStoreOptions {
  /** Clock for stored timestamps (created_at, completed_at, …); tests pass a fake one. */
  now?: () => number;
  /** How often waitForChange polls `PRAGMA data_version`, in ms (a poll costs microseconds). */
  pollMs?: number;
  /** Told when an existing database file is open to other users. */
  warn?: (message: string) => void;
  /** FULL syncs every commit to disk (a power loss loses none); default NORMAL. */
  synchronous?: SqliteSynchronous;
  /**
   * Checkpoint the WAL from a background thread instead of in the commit that crosses the
   * threshold (the app: its requests must not wait for a checkpoint). File databases only.
   */
  backgroundCheckpoints?: boolean;
  /**
   * Wait for another process's write lock without blocking the thread: SQLite's own busy
   * handler sleeps inside the call (1, 2, 5, 10, 15 … ms), stalling every request in flight
   * with it; here a call that finds the lock taken fails at once and is retried after an async
   * 1 ms pause, for up to 5 s in all. For the app, whose requests share one thread. (Letting
   * SQLite wait up to 5 ms first measured worse once the app stopped checkpointing in its
   * commits: PATCH p99 at 16 clients 9–14 ms with that wait, 9–12 ms without.)
   */
  yieldWhenBusy?: boolean;
  /** Renders a change's templates at enqueue (default: this process's renderer; tests gate it). */
  renderTemplates?: RenderTemplates;
}

/** How long a write waits for the lock in all, with `yieldWhenBusy`, as busy_timeout does. */
const BUSY_WAIT_MS = 5000;

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "SQLITE_BUSY" || code === "SQLITE_BUSY_SNAPSHOT";
}

/** What a call that waited out BUSY_WAIT_MS for another process's write lock says. */
const LOCKED_TOO_LONG = "the database is locked: another process held its write lock for over 5 s";

/** Runs `fn`, again after a 1 ms pause while it fails with SQLITE_BUSY, for up to 5 s. */
async function retryingWhenBusy<T>(fn: () => Promise<T>): Promise<T> {
  const deadline = performance.now() + BUSY_WAIT_MS;
  for (;;) {
    try {
      return await fn();
    } catch (error) {
      if (!isBusy(error) || performance.now() > deadline) throw error;
      await Bun.sleep(1);
    }
  }
}

/** The safety-net poll of waitForChange; WAL file events normally wake it within ~2 ms. */
export const DEFAULT_POLL_MS = 50;

/** `repo` with each method run through `availability.watch` (its failures and stalls seen). */
function watched<T extends object>(repo: T, availability: AvailabilityWatch): T {
  const wrapped: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(repo)) {
    if (typeof method !== "function") continue;
    wrapped[name] = (...args: unknown[]) => availability.watch(async () => method(...args));
  }
  return wrapped as T;
}

/** Opens (creating and migrating) the SQLite database at `path` as a Store. */
export function openSqliteStore(path: string, options: SqliteStoreOptions = {}): Store {
  const db = openSqlite(path, { warn: options.warn, synchronous: options.synchronous });
  const store = createSqliteStore(db, options);
  if (path === ":memory:") return store;
  const stopCheckpoints = options.backgroundCheckpoints ? checkpointInBackground(db, path) : null;
  const opened = fileIdentity(path);
  const close = async () => {
    stopCheckpoints?.();
    await store.close();
  };
  if (opened === null) return { ...store, close };
  return { ...store, close, fileProblem: () => fileChange(path, opened) };
}

/**
 * A Store on one bun:sqlite connection. bun:sqlite is synchronous, so every repository call runs
 * to completion before anything else; only `transaction(fn)` spans awaits. A FIFO mutex keeps
 * other callers in this process off the connection while such a transaction is open (they would
 * otherwise silently become part of it), and calls made from inside `fn` (found through
 * AsyncLocalStorage) join the transaction instead of waiting for it.
 */
export function createSqliteStore(db: Database, options: SqliteStoreOptions = {}): Store {
  const pollMs = options.pollMs ?? DEFAULT_POLL_MS;
  const mutex = createMutex();
  const inTransaction = new AsyncLocalStorage<Repos>();
  // Checkpoint the WAL every ~40 MB instead of every 4 MB: a checkpoint syncs to disk, and at
  // thousands of small commits a second the default made checkpoints most of the write cost.
  db.run("PRAGMA wal_autocheckpoint = 10000");
  const changes = createChangeListener(db, { pollMs, busy: () => mutex.locked });

  // One view of the database's availability for the process's writes: the claims that note an
  // outage's end and the heartbeats that may be the only write an idle worker made through it.
  const availability = createAvailabilityWatch();
  const repos = {
    webhooks: createSqliteWebhookRepo(db, { now: options.now, changes }),
    queue: createSqliteQueue(db, {
      now: options.now,
      changes,
      availability,
      render: options.renderTemplates,
      read: <T>(fn: () => T) =>
        inTransaction.getStore() ? Promise.resolve(fn()) : exclusive(async () => fn()),
    }),
    items: createSqliteItemRepo(db),
    workers: createSqliteWorkerRegistry(db, { availability, now: options.now }),
    // A worker's failure streaks and event relay write through the watch too: a write of theirs
    // that failed or stalled is an outage the next claim must note, like one of the queue's.
    health: watched(createSqliteHealthRepo(db), availability),
    events: watched(createSqliteEventRepo(db), availability),
  };

  const yieldWhenBusy = options.yieldWhenBusy === true;
  if (yieldWhenBusy) db.run("PRAGMA busy_timeout = 0");
  /** A call outside any transaction: behind the mutex, retried (mutex released) while busy. */
  function exclusive<T>(fn: () => Promise<T>): Promise<T> {
    if (!yieldWhenBusy) return mutex.run(fn);
    return retryingWhenBusy(() => mutex.run(fn));
  }

  /** `free` methods take their turn themselves (queue.plan: its renders must not hold it). */
  function guarded<T extends object>(repo: T, free: ReadonlyArray<keyof T> = []): T {
    const wrapped: Record<string, unknown> = {};
    for (const [name, method] of Object.entries(repo)) {
      if (typeof method !== "function") continue;
      wrapped[name] = free.includes(name as keyof T)
        ? method
        : (...args: unknown[]) =>
            inTransaction.getStore() ? method(...args) : exclusive(async () => method(...args));
    }
    return wrapped as T;
  }

  let savepoints = 0;

  async function transaction<T>(fn: (tx: Repos) => Promise<T>): Promise<T> {
    if (inTransaction.getStore()) {
      // A transaction inside a transaction: a savepoint, so a failing inner part can be caught.
      const name = `sp${++savepoints}`;
      db.run(`SAVEPOINT ${name}`);
      try {
        const result = await fn(repos);
        db.run(`RELEASE ${name}`);
        return result;
      } catch (error) {
        db.run(`ROLLBACK TO ${name}`);
        db.run(`RELEASE ${name}`);
        throw error;
      }
    }
    return exclusive(() =>
      availability.watch(async () => {
        db.run("BEGIN IMMEDIATE");
        try {
          const result = await inTransaction.run(repos, () => fn(repos));
          db.run("COMMIT");
          return result;
        } catch (error) {
          if (db.inTransaction) db.run("ROLLBACK");
          throw error;
        }
      }),
    );
  }

  let closed = false;
  return {
    kind: "sqlite",
    sessions: guarded(createSqliteSessionRevocations(db, options.now)),
    tokens: guarded(createSqliteApiTokenRepo(db, options.now)),
    idempotency: guarded(createSqliteIdempotencyKeys(db)),
    webhooks: guarded(repos.webhooks),
    // plan and retry take their turns themselves: their renders must not hold the connection.
    queue: guarded(repos.queue, ["plan", "worthPlanning", "retry"]),
    items: guarded(repos.items),
    workers: guarded(repos.workers),
    health: guarded(repos.health),
    events: guarded(repos.events),
    transaction,
    waitForChange: changes.waitForChange,
    // A file on this machine: there is no connection to lose.
    reachable: true,
    untilReachable: async () => {},
    isUnreachable: () => false,
    readiness: () =>
      exclusive(async () => sqliteReadiness(db)).catch((error: unknown) => {
        if (!isBusy(error)) throw error;
        return LOCKED_TOO_LONG;
      }),
    explainFailure: (error) =>
      isBusy(error) ? LOCKED_TOO_LONG : explainSqliteFailure(error, db.filename),
    async close() {
      if (closed) return;
      closed = true;
      changes.close();
      await mutex.run(() => db.close());
    },
  };
}
