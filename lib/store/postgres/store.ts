import { AsyncLocalStorage } from "node:async_hooks";
import { SQL, type TransactionSQL } from "bun";
import type { Logger } from "../../log.ts";
import type { Repos, Store } from "../../webhooks/ports.ts";
import { createPlanHint } from "../../webhooks/rendering/change-plan.ts";
import type { RenderTemplates } from "../../webhooks/rendering/render-process.ts";
import { postgresAddress } from "../database-url.ts";
import { createPostgresApiTokenRepo } from "./api-tokens.ts";
import { planConnections, retryStartup, type StartupRetryOptions } from "./budget.ts";
import { type ChangeListener, createChangeListener, createPollingListener } from "./changes.ts";
import { storeClock } from "./clock.ts";
import { type Db, isConnectionError, poolDb, transactionDb, urlOptions } from "./db.ts";
import { createPostgresHealthRepo } from "./health.ts";
import { createPostgresIdempotencyKeys } from "./idempotency.ts";
import { createPostgresItemRepo } from "./items.ts";
import { migrate } from "./migrations.ts";
import { createPostgresEventRepo } from "./operational-events.ts";
import { createPostgresQueue } from "./queue/index.ts";
import { createOutageWatch } from "./queue/outages.ts";
import { createReachability } from "./reachability.ts";
import { explainPostgresFailure, postgresReadiness } from "./readiness.ts";
import { createPostgresSessionRevocations } from "./sessions.ts";
import { createPostgresWebhookRepo } from "./webhooks.ts";
import { createPostgresWorkerRegistry } from "./workers.ts";

export interface PostgresStoreOptions {
  /** Renders a change's templates at enqueue (default: this process's renderer; tests gate it). */
  renderTemplates?: RenderTemplates;
  /**
   * A test clock for leases, due times and stamps; absent (in production), the database's clock
   * is the one clock of every process (see clock.ts).
   */
  now?: () => number;
  /**
   * Connections this process may open, the LISTEN connection included (default 4; see
   * budget.ts). The URL's `max=` is read by the caller (parseDatabaseUrl) and passed here.
   */
  connections?: number;
  /** Whether this process waits for work (a worker): then one connection may LISTEN. */
  waitsForWork?: boolean;
  /** Retrying the first connection while the server is full or unreachable. */
  startup?: StartupRetryOptions;
  /** Longest waitForChange while the LISTEN connection is down (polling), in ms. */
  pollIntervalMs?: number;
  /** How long releases and send-slot writes keep retrying through a lost connection, in ms. */
  reconnectWaitMs?: number;
  logger?: Pick<Logger, "warn" | "info">;
}

interface OpenTransaction {
  tx: TransactionSQL;
  repos: Repos;
}

/**
 * Opens the PostgreSQL database at `url` (postgres://user:password@host:port/db) as a Store,
 * applying pending migrations first. Several processes may open it at once.
 */
export async function openPostgresStore(
  url: string,
  options: PostgresStoreOptions = {},
): Promise<Store> {
  const plan = planConnections(options.connections ?? 4, options.waitsForWork ?? true);
  const sql = new SQL(url, { ...urlOptions(url), max: plan.pool });
  try {
    await retryStartup(() => migrate(sql), {
      logger: options.logger,
      where: postgresAddress(url),
      ...options.startup,
    });
  } catch (error) {
    await sql.close({ timeout: 0 }).catch(() => {});
    throw error;
  }
  const connected = { onConnected: () => {} };
  const changes = plan.listen
    ? createChangeListener(url, {
        pollIntervalMs: options.pollIntervalMs,
        logger: options.logger,
        onConnected: () => connected.onConnected(),
      })
    : createPollingListener(options.pollIntervalMs ?? 200);
  const store = createPostgresStore(sql, changes, options);
  // A re-established LISTEN connection is the database answering again.
  connected.onConnected = store.answered;
  return store;
}

/**
 * A Store on a Bun SQL pool. `transaction(fn)` hands `fn` repositories bound to one
 * transaction; calls made from inside `fn` through the store's own repositories (found through
 * AsyncLocalStorage) join it too, and a nested `transaction` becomes a savepoint, as on SQLite.
 */
export function createPostgresStore(
  sql: SQL,
  changes: ChangeListener,
  options: PostgresStoreOptions = {},
): Store & { answered(): void } {
  const current = new AsyncLocalStorage<OpenTransaction>();
  const clock = storeClock(options.now);
  const outages = createOutageWatch();
  const closing = new AbortController();
  const reachability = createReachability({
    probe: () => sql`SELECT 1`,
    logger: options.logger,
    onBack: outages.cameBack,
  });

  /** Every call's outcome tells whether the database answers (logged once per outage). */
  function observed<T>(call: () => Promise<T>): Promise<T> {
    return call().then(
      (result) => {
        reachability.answered();
        return result;
      },
      (error: unknown) => {
        reachability.failed(error);
        throw error;
      },
    );
  }

  const hint = createPlanHint();
  function reposFor(db: Db): Repos {
    return {
      webhooks: createPostgresWebhookRepo(db, { now: options.now }),
      queue: createPostgresQueue(db, {
        now: options.now,
        markSeen: changes.markSeen,
        reconnectWaitMs: options.reconnectWaitMs,
        outages,
        closing: closing.signal,
        render: options.renderTemplates,
        hint,
      }),
      items: createPostgresItemRepo(db),
      workers: createPostgresWorkerRegistry(db, clock),
      health: createPostgresHealthRepo(db, clock),
      events: createPostgresEventRepo(db),
    };
  }

  const pool = reposFor(poolDb(sql, reachability.failed));

  function joining<K extends keyof Repos>(key: K): Repos[K] {
    const wrapped: Record<string, unknown> = {};
    for (const name of Object.keys(pool[key])) {
      wrapped[name] = (...args: unknown[]) => {
        const repo = (current.getStore()?.repos ?? pool)[key] as unknown as Record<string, unknown>;
        return observed(() => (repo[name] as (...a: unknown[]) => Promise<unknown>)(...args));
      };
    }
    return wrapped as unknown as Repos[K];
  }

  async function transaction<T>(fn: (tx: Repos) => Promise<T>): Promise<T> {
    const open = current.getStore();
    const run = (tx: TransactionSQL) => {
      const repos = reposFor(transactionDb(tx));
      return current.run({ tx, repos }, () => fn(repos));
    };
    // Bun types a callback's array result specially; ours is whatever fn returns.
    if (open) return (await open.tx.savepoint(run)) as T;
    return (await observed(() => sql.begin(run))) as T;
  }

  let closed = false;

  return {
    kind: "postgres",
    sessions: createPostgresSessionRevocations(sql, options.now),
    tokens: createPostgresApiTokenRepo(sql, options.now),
    idempotency: createPostgresIdempotencyKeys(sql),
    webhooks: joining("webhooks"),
    // A hint read from memory: not a database call, so not one that says it answered.
    queue: { ...joining("queue"), worthPlanning: pool.queue.worthPlanning },
    items: joining("items"),
    workers: joining("workers"),
    health: joining("health"),
    events: joining("events"),
    transaction,
    waitForChange(waitOptions) {
      if (closed) return Promise.resolve();
      return changes.wait(waitOptions);
    },
    get reachable() {
      return reachability.reachable;
    },
    untilReachable: ({ signal }) => reachability.untilReachable(signal),
    isUnreachable: isConnectionError,
    readiness: () => postgresReadiness(sql),
    explainFailure: explainPostgresFailure,
    answered: reachability.answered,
    async close() {
      if (closed) return;
      closed = true;
      closing.abort();
      reachability.close();
      await changes.close();
      await sql.close({ timeout: 5 });
    },
  };
}
