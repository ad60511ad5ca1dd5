import { hostname } from "node:os";
import { batch } from "../async/batch.ts";
import type { Sleep } from "../async/sleep.ts";
import type { Resolver } from "../http/ssrf.ts";
import type { Logger } from "../log.ts";
import { createFreshness } from "../webhooks/delivery/lease-rules.ts";
import { createWorker, type Worker, type WorkerHooks } from "../webhooks/delivery/loop.ts";
import type { DisabledKind } from "../webhooks/events/operational-events.ts";
import {
  type AutoDisableSettings,
  createWebhookHealth,
  DEFAULT_AUTO_DISABLE,
} from "../webhooks/policy/webhook-health.ts";
import type { FinishItem, Store } from "../webhooks/ports.ts";
import { createAfterAttempt, hasAfterEffects } from "./after-attempt.ts";
import type { WorkerConfig } from "./config.ts";
import { createEventRelay, type EventRelay } from "./event-relay.ts";
import { combineHooks, loggingHooks } from "./log-hooks.ts";
import { createWorkerSend } from "./worker-send.ts";

/** The longest an idle worker sleeps without looking (a safety net; changes wake it sooner). */
const MAX_IDLE_MS = 60_000;
/** Least sleep when work looked due but none could be claimed (another worker took it). */
const MIN_WAIT_MS = 10;
/**
 * Results are committed in groups of this many, or once the oldest has waited RESULT_WINDOW_MS:
 * a commit rewrites the last page of every table and index it touches, so results per commit
 * are what make them cheap (docs/benchmarks.md).
 */
export const RESULTS_PER_COMMIT = 64;
export const RESULT_WINDOW_MS = 5;

export interface DeliveryWorkerOptions {
  store: Store;
  config: Pick<
    WorkerConfig,
    | "timeoutMs"
    | "maxAttempts"
    | "allowList"
    | "leaseMs"
    | "concurrency"
    | "retryBaseMs"
    | "retryMaxMs"
  > & { prefetch?: number };
  workerId?: string;
  fetch?: typeof fetch;
  resolve?: Resolver;
  now?: () => number;
  random?: () => number;
  logger?: Logger;
  /** false: the caller shows attempts itself (the demo prints them), so they are not logged too. */
  logAttempts?: boolean;
  /** Log successful attempts too (at debug level): --verbose or LOG_LEVEL=debug. */
  verbose?: boolean;
  /** Extra observers (metrics); run after the logging ones. */
  hooks?: WorkerHooks;
  /** When a failing webhook is disabled automatically (WEBHOOK_AUTO_DISABLE*). */
  autoDisable?: AutoDisableSettings;
  /** Told of each webhook this worker disabled automatically (metrics). */
  onAutoDisabled?: (kind: DisabledKind) => void;
  /** Waits for a claim's send slot (rate limit, end of a 429/503 pause); tests pass a fake. */
  sleep?: Sleep;
  /** Called at every claim, i.e. once per loop turn (retention's maybeRun). Must not throw. */
  onTurn?: () => void;
  /** First pause after a failed claim (see WorkerOptions); tests lengthen it. */
  claimErrorDelayMs?: number;
}

export function newWorkerId(): string {
  const suffix = crypto.getRandomValues(new Uint8Array(3));
  return `${hostname()}:${process.pid}:${Buffer.from(suffix).toString("hex")}`;
}

/** A worker wired to a store and the HTTP sender: wiring only, the rules live in lib/webhooks. */
export function createDeliveryWorker(
  options: DeliveryWorkerOptions,
): Worker & { id: string; relay: EventRelay } {
  const { store, config, logger } = options;
  const now = options.now ?? Date.now;
  const workerId = options.workerId ?? newWorkerId();
  const limits = { timeoutMs: config.timeoutMs, leaseMs: config.leaseMs };
  const afterAttempt = createAfterAttempt({
    health: createWebhookHealth({
      store: store.health,
      settings: options.autoDisable ?? DEFAULT_AUTO_DISABLE,
      now,
      logger,
      onDisabled: options.onAutoDisabled,
    }),
    pause: store.health.pause,
    logger,
  });
  // Fans out webhook.disabled and delivery.exhausted, recorded with what caused them.
  const relay = createEventRelay({ store, now, logger });
  const send = createWorkerSend({
    config,
    limits,
    now,
    random: options.random,
    sleep: options.sleep,
    fetch: options.fetch,
    resolve: options.resolve,
    keepRendered: (claim, rendered) => store.queue.keepRendered(claim, rendered),
    webhook: (id) => store.webhooks.get(id),
  });

  // Group commit, one mechanism for both stores (graphile-worker's batch() around completeJob).
  const finishBatched = batch((items: FinishItem[]) => store.queue.finishMany(items), {
    maxSize: RESULTS_PER_COMMIT,
    windowMs: RESULT_WINDOW_MS,
    key: (item) => item.claim.delivery.id,
  });

  const worker = createWorker(
    {
      claim(limit, holding) {
        options.onTurn?.();
        relay.maybeRun();
        const { leaseMs } = config;
        const maxAttempts = config.maxAttempts ?? undefined;
        return store.queue.claim({ workerId, limit, leaseMs, now: now(), maxAttempts, holding });
      },
      async renew(claims) {
        const renewed = await store.queue.renew(claims, { leaseMs: config.leaseMs, now: now() });
        return renewed.filter((claim) => claim !== null);
      },
      send,
      finish(claim, delivered) {
        const { record, outcome } = delivered;
        const written = finishBatched({ claim, record, outcome });
        // The usual case, a success to a webhook with no failure streak, writes nothing more.
        const failed = outcome.state === "failed";
        // A success that ends a failing notice records its webhook.recovered.
        const recovers =
          outcome.state === "successful" && (claim.webhook.failingNoticedAt ?? null) !== null;
        if (!hasAfterEffects(delivered) && !failed && !recovers) return written;
        return written.then(async (applied) => {
          if (applied) await afterAttempt(claim, delivered);
          // A delivery ending failed, a webhook disabled, failing or recovering may have
          // recorded an event.
          if (applied && (failed || recovers || delivered.streak !== undefined)) relay.kick();
          return applied;
        });
      },
      release: (claims) => store.queue.release(claims),
      async waitForWork(signal) {
        const due = await store.queue.nextDueAt();
        const timeoutMs = due === null ? MAX_IDLE_MS : Math.min(MAX_IDLE_MS, due - now());
        await store.waitForChange({ timeoutMs: Math.max(timeoutMs, MIN_WAIT_MS), signal });
      },
      availability: {
        reachable: () => store.reachable,
        untilReachable: (signal) => store.untilReachable({ signal }),
        isUnreachable: (error) => store.isUnreachable(error),
      },
    },
    {
      concurrency: config.concurrency,
      prefetch: config.prefetch,
      freshness: createFreshness(limits, now),
      claimErrorDelayMs: options.claimErrorDelayMs,
      resultRetryMaxMs: Math.max(100, config.leaseMs / 4),
      hooks: combineHooks(
        logger && options.logAttempts !== false
          ? loggingHooks(logger, config, {
              verbose: options.verbose,
              isUnreachable: (error) => store.isUnreachable(error),
              webhookExists: async (id) => (await store.webhooks.get(id)) !== null,
            })
          : {},
        options.hooks,
      ),
    },
  );
  return Object.assign(worker, { id: workerId, relay });
}
