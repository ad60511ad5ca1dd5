import { hostname } from "node:os";
import { abortableSleep, type Sleep } from "../async/sleep.ts";
import type { DestinationCheck, Resolver } from "../http/ssrf.ts";
import type { Logger } from "../log.ts";
import { escapeControl } from "../text/control.ts";
import { errorMessage } from "../text/error-message.ts";
import { createWorker, type Worker, type WorkerHooks } from "../webhooks/loop.ts";
import type { Claim, Delivered, Webhook } from "../webhooks/model.ts";
import {
  type AutoDisableSettings,
  createEndpointHealth,
  DEFAULT_AUTO_DISABLE,
} from "../webhooks/policy/endpoint-health.ts";
import { DEFAULT_RETRY_POLICY, decideOutcome, type RetryPolicy } from "../webhooks/policy/retry.ts";
import type { Store } from "../webhooks/ports.ts";
import { sendAttempt, timeoutOf } from "../webhooks/send.ts";
import { createCaFiles } from "../webhooks/tls-options.ts";
import { createAfterAttempt } from "./after-attempt.ts";
import { attemptLogEntry, logAttempt } from "./attempt-log.ts";
import type { WorkerConfig } from "./config.ts";

/** The longest an idle worker sleeps without looking (a safety net; changes wake it sooner). */
const MAX_IDLE_MS = 60_000;
/** Least sleep when work looked due but none could be claimed (another worker took it). */
const MIN_WAIT_MS = 10;
/**
 * A request starts only while its lease outlasts it by this much: room to write the result
 * before another worker may take the delivery over. The same margin the lease must exceed the
 * timeout by (config), so a freshly renewed claim always qualifies.
 */
export const START_MARGIN_MS = 1000;
/**
 * A webhook's URL, secret, headers and enabled flag, as read with a claim or a renewal, are
 * used for this long; older, they are read again before a request starts. Changes to a webhook
 * therefore reach requests within this time (plus the request itself).
 */
export const WEBHOOK_FRESH_MS = 500;

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

export function retryPolicyOf(config: DeliveryWorkerOptions["config"]): RetryPolicy {
  return {
    ...DEFAULT_RETRY_POLICY,
    maxAttempts: config.maxAttempts,
    baseMs: config.retryBaseMs,
    maxMs: config.retryMaxMs,
  };
}

/** A worker wired to a store, the HTTP sender and the retry policy. */
export function createDeliveryWorker(options: DeliveryWorkerOptions): Worker & { id: string } {
  const { store, config } = options;
  const now = options.now ?? Date.now;
  const workerId = options.workerId ?? newWorkerId();
  const policy = retryPolicyOf(config);
  const literalChecks = new Map<string, DestinationCheck>();
  const caFiles = createCaFiles();
  const sleep = options.sleep ?? abortableSleep;
  // After each recorded attempt: the failure streak (auto-disable) and the 429/503 slow-down.
  const afterAttempt = createAfterAttempt({
    health: createEndpointHealth({
      store: store.health,
      settings: options.autoDisable ?? DEFAULT_AUTO_DISABLE,
      now,
      logger: options.logger,
    }),
    pause: store.health.pause,
    now,
    logger: options.logger,
  });

  // The newest webhook values seen (with a claim or a renewal) and when they were read.
  const webhooks = new Map<number, { webhook: Webhook; readAt: number }>();
  function remember(claims: Claim[], readAt: number): void {
    for (const claim of claims) {
      const known = webhooks.get(claim.webhook.id);
      if (!known || known.readAt <= readAt)
        webhooks.set(claim.webhook.id, { webhook: claim.webhook, readAt });
    }
  }
  // What must be left of a lease when a request is started: the timeout and the margin to
  // write the result; right before sending, at least the timeout (a last check for a process
  // that was paused). Capped for a lease shorter than the configuration allows (tests).
  const startNeed = (claim: Claim) => {
    const limits = { timeoutMs: config.timeoutMs, maxTimeoutMs: config.leaseMs - START_MARGIN_MS };
    return Math.min(timeoutOf(claim, limits).ms + START_MARGIN_MS, config.leaseMs);
  };
  const sendNeed = Math.min(config.timeoutMs, config.leaseMs / 2);
  /** Whether the lease still outlasts a request started now (after the claim's send slot). */
  function leaseOutlasts(claim: Claim, t: number, need: number): boolean {
    const start = Math.max(t, claim.notBefore ?? 0);
    return (claim.delivery.leaseExpiresAt ?? 0) - start >= need;
  }

  const worker = createWorker(
    {
      async claim(limit) {
        options.onTurn?.();
        const t = now();
        const claims = await store.queue.claim({
          workerId,
          limit,
          leaseMs: config.leaseMs,
          now: t,
          maxAttempts: config.maxAttempts,
        });
        remember(claims, t);
        return claims;
      },
      sendable(claim) {
        const t = now();
        const known = webhooks.get(claim.webhook.id);
        if (!known || t - known.readAt > WEBHOOK_FRESH_MS) return false;
        claim.webhook = known.webhook;
        return known.webhook.enabled && leaseOutlasts(claim, t, startNeed(claim));
      },
      async recheck(claims) {
        const t = now();
        const renewed = await store.queue.renew(claims, { leaseMs: config.leaseMs, now: t });
        const keep = renewed.filter((claim): claim is Claim => claim !== null);
        remember(keep, t);
        return keep;
      },
      async deliver(claim, signal): Promise<Delivered | null> {
        // A rate-limited webhook's slot, or the end of its pause, may be up to a second ahead.
        const wait = (claim.notBefore ?? 0) - now();
        if (wait > 0) {
          await sleep(wait, signal);
          if (signal.aborted) throw signal.reason ?? new Error("Aborted");
        }
        // Right before the request: a process paused (SIGSTOP, a VM freeze) past its lease
        // must not send what another worker may have taken over meanwhile.
        if (!leaseOutlasts(claim, now(), sendNeed)) return null;
        const sent = await sendAttempt(claim, {
          timeoutMs: config.timeoutMs,
          // A webhook's own, longer timeout ends while the lease still holds the delivery.
          maxTimeoutMs: Math.max(
            100,
            (claim.delivery.leaseExpiresAt ?? 0) - now() - START_MARGIN_MS,
          ),
          caFiles,
          allow: config.allowList,
          fetch: options.fetch,
          resolve: options.resolve,
          now,
          signal,
          literalChecks,
        });
        const outcome = decideOutcome(sent, claim.attempt, policy, {
          now: now(),
          random: options.random,
        });
        return { record: sent.record, outcome };
      },
      finish(claim, delivered) {
        const written = store.queue.finish(claim, delivered.record, delivered.outcome);
        // The usual case, a success to a webhook with no failure streak, needs nothing more:
        // no health write, no pause.
        if (delivered.record.outcome === "success" && claim.webhook.failingSince === null) {
          return written;
        }
        return written.then(async (applied) => {
          if (applied) await afterAttempt(claim, delivered);
          return applied;
        });
      },
      release: (claims) => store.queue.release(claims),
      isUnreachable: (error) => store.isUnreachable(error),
      untilReachable: (signal) => store.untilReachable({ signal }),
      reachable: () => store.reachable,
      async waitForWork(signal) {
        const due = await store.queue.nextDueAt();
        const timeoutMs = due === null ? MAX_IDLE_MS : Math.min(MAX_IDLE_MS, due - now());
        await store.waitForChange({ timeoutMs: Math.max(timeoutMs, MIN_WAIT_MS), signal });
      },
    },
    {
      concurrency: config.concurrency,
      prefetch: config.prefetch,
      claimErrorDelayMs: options.claimErrorDelayMs,
      hooks: combineHooks(
        options.logger && options.logAttempts !== false
          ? loggingHooks(options.logger, config, {
              verbose: options.verbose,
              isUnreachable: (error) => store.isUnreachable(error),
            })
          : {},
        options.hooks,
      ),
    },
  );
  return Object.assign(worker, { id: workerId });
}

/**
 * One line per attempt (attempt-log.ts): failures at warn, successes at debug, with
 * delivery id, webhook, attempt, status and duration; JSON fields with LOG_FORMAT=json.
 */
export function loggingHooks(
  logger: Logger,
  config: Pick<WorkerConfig, "maxAttempts">,
  options: {
    verbose?: boolean;
    /** Errors of an outage, which the store logs once for all ("database unreachable"). */
    isUnreachable?: (error: unknown) => boolean;
  } = {},
): WorkerHooks {
  return {
    onFinished(claim, delivered, applied) {
      if (!applied) {
        logger.warn(
          `Delivery ${claim.delivery.id} (${claim.delivery.event}) to "${escapeControl(claim.webhook.name)}", attempt ${claim.attempt}: result discarded, the lease had expired and another worker took it`,
        );
        return;
      }
      // Built only when shown: at thousands of deliveries a second the strings add up.
      if (delivered.outcome.state === "successful" && !options.verbose) return;
      logAttempt(logger, attemptLogEntry(claim, delivered, config.maxAttempts));
    },
    onReleased(claims) {
      logger.info(
        `Released ${claims.length} unfinished ${claims.length === 1 ? "delivery" : "deliveries"}`,
      );
    },
    onError(error, context) {
      if (context.phase !== "deliver" && options.isUnreachable?.(error)) return;
      const message = escapeControl(errorMessage(error));
      const where = context.claim ? ` (delivery ${context.claim.delivery.id})` : "";
      logger.error(`Worker ${context.phase} failed${where}: ${message}`);
    },
  };
}

/** Observers run in order; absent ones are skipped. */
export function combineHooks(...all: Array<WorkerHooks | undefined>): WorkerHooks {
  const list = all.filter((hooks): hooks is WorkerHooks => hooks !== undefined);
  if (list.length === 1 && list[0]) return list[0];
  return {
    onClaimed: (claims) => {
      for (const hooks of list) hooks.onClaimed?.(claims);
    },
    onFinished: (claim, delivered, applied) => {
      for (const hooks of list) hooks.onFinished?.(claim, delivered, applied);
    },
    onReleased: (claims) => {
      for (const hooks of list) hooks.onReleased?.(claims);
    },
    onError: (error, context) => {
      for (const hooks of list) hooks.onError?.(error, context);
    },
  };
}
