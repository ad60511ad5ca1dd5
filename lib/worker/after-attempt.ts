import type { Logger } from "../log.ts";
import { escapeControl } from "../text/control.ts";
import { errorMessage } from "../text/error-message.ts";
import type { Claim, Delivered } from "../webhooks/model.ts";
import type { EndpointHealth } from "../webhooks/policy/endpoint-health.ts";
import {
  DEFAULT_SLOW_DOWN,
  headerValue,
  PAUSE_WEBHOOK_STATUSES,
  type SlowDownSettings,
  slowDownUntil,
} from "../webhooks/policy/rate-limit.ts";

export interface AfterAttemptOptions {
  /** Failure streaks and auto-disable; omitted: not tracked. */
  health?: EndpointHealth;
  /** Stores a 429/503 pause (e.g. pauseWebhook on SQLite); omitted: no slow-down. */
  pause?: (webhookId: number, until: number) => Promise<boolean>;
  slowDown?: SlowDownSettings;
  now?: () => number;
  logger?: Pick<Logger, "warn">;
}

/**
 * What the worker does after the queue accepted an attempt's result (finish() returned true):
 * endpoint health (streak, auto-disable) and the 429/503 slow-down of the whole webhook. A
 * failing write is logged, never thrown: the attempt itself is already recorded.
 */
export function createAfterAttempt(
  options: AfterAttemptOptions,
): (claim: Claim, delivered: Delivered) => Promise<void> {
  const { health, pause, slowDown = DEFAULT_SLOW_DOWN, now = Date.now, logger } = options;
  return async (claim, delivered) => {
    const { record } = delivered;
    // Built only when needed: this runs after every attempt.
    const name = () => escapeControl(JSON.stringify(claim.webhook.name));
    try {
      await health?.afterAttempt({ webhook: claim.webhook, record, outcome: delivered.outcome });
    } catch (error) {
      logger?.warn(
        `Could not record the health of webhook ${name()}: ${escapeControl(errorMessage(error))}`,
      );
    }
    if (!pause || record.statusCode === null || !PAUSE_WEBHOOK_STATUSES.has(record.statusCode))
      return;
    const t = now();
    const retryAfter = headerValue(record.responseHeaders, "retry-after");
    const until = slowDownUntil({ statusCode: record.statusCode, retryAfter, now: t }, slowDown);
    if (until === null) return;
    try {
      if (await pause(claim.webhook.id, until)) {
        logger?.warn(
          `Webhook ${name()} paused until ${new Date(until).toISOString()}: the endpoint answered HTTP ${record.statusCode}`,
        );
      }
    } catch (error) {
      logger?.warn(`Could not pause webhook ${name()}: ${escapeControl(errorMessage(error))}`);
    }
  };
}
