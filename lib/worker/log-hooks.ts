import type { Logger } from "../log.ts";
import { escapeControl } from "../text/control.ts";
import { errorMessage } from "../text/error-message.ts";
import { maskUrlPasswords } from "../text/url-credentials.ts";
import {
  type StoreCalls,
  storeCallsOf,
  type WorkerHooks,
} from "../webhooks/delivery/loop-contract.ts";
import { attemptLogEntry, logAttempt } from "./attempt-log.ts";
import type { WorkerConfig } from "./config.ts";

/**
 * One line per attempt (attempt-log.ts): failures at warn, successes at debug, with delivery
 * id, webhook, attempt, status and duration; JSON fields with LOG_FORMAT=json. Store errors are
 * logged once per run of failures, with a count when calls succeed again, as the store logs an
 * outage ("unreachable", then "back"): a full disk would otherwise log every retried write.
 * Queue calls and result writes have a run each: claims that work do not end failing writes.
 */
export function loggingHooks(
  logger: Logger,
  config: Pick<WorkerConfig, "maxAttempts">,
  options: {
    verbose?: boolean;
    /** Errors of an outage, which the store logs once for all ("database unreachable"). */
    isUnreachable?: (error: unknown) => boolean;
    /** Whether a webhook still exists: a discarded result then names why it was discarded. */
    webhookExists?: (id: number) => Promise<boolean>;
    now?: () => number;
  } = {},
): WorkerHooks {
  const now = options.now ?? Date.now;
  /** The runs of failed store calls under way: when the first was logged, and how many more. */
  const failing: Record<StoreCalls, { since: number; more: number } | null> = {
    queue: null,
    results: null,
  };
  function discarded(...[claim]: Parameters<NonNullable<WorkerHooks["onFinished"]>>): void {
    const what = `Delivery ${claim.delivery.id} (${claim.delivery.event}) to "${escapeControl(claim.webhook.name)}", attempt ${claim.attempt}: result discarded`;
    const exists = options.webhookExists?.(claim.webhook.id) ?? Promise.resolve(true);
    void exists
      .catch(() => true)
      .then((still) =>
        logger.warn(
          still
            ? `${what}, the lease had expired and another worker took it`
            : `${what}, the webhook was removed meanwhile`,
        ),
      );
  }
  return {
    onFinished(claim, delivered, applied) {
      if (!applied) return discarded(claim, delivered, applied);
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
      const { phase } = context;
      if (phase !== "deliver") {
        if (options.isUnreachable?.(error)) return;
        const calls = storeCallsOf(phase);
        const run = failing[calls];
        if (run !== null) {
          run.more++;
          return;
        }
        failing[calls] = { since: now(), more: 0 };
      }
      const message = escapeControl(maskUrlPasswords(errorMessage(error)));
      const where = context.claim ? ` (delivery ${context.claim.delivery.id})` : "";
      logger.error(`Worker ${context.phase} failed${where}: ${message}`);
    },
    onStoreBack(calls) {
      const run = failing[calls];
      if (run === null) return;
      failing[calls] = null;
      if (run.more === 0) return;
      const seconds = ((now() - run.since) / 1000).toFixed(1);
      const what = calls === "results" ? "Result writes" : "Queue calls";
      logger.info(
        `${what} succeed again: ${run.more} more failed in ${seconds} s after the one logged`,
      );
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
    onStoreBack: (calls) => {
      for (const hooks of list) hooks.onStoreBack?.(calls);
    },
  };
}
