import type { Logger } from "../log.ts";
import { escapeControl } from "../text/control.ts";
import { errorMessage } from "../text/error-message.ts";
import type { Claim, Delivered } from "../webhooks/model.ts";
import type { WebhookHealth } from "../webhooks/policy/webhook-health.ts";

export interface AfterAttemptOptions {
  /** Failure streaks and auto-disable; omitted: not tracked. */
  health?: WebhookHealth;
  /** Stores a 429/503 pause (WebhookHealthRepo.pause); omitted: no slow-down. */
  pause?: (webhookId: number, until: number) => Promise<boolean>;
  logger?: Pick<Logger, "warn">;
}

/**
 * Writes what the judge of the attempt decided (policy/judge.ts), once the queue accepted its
 * result (finish() returned true): the failure streak (auto-disable) and the 429/503 pause of
 * the whole webhook. Decides nothing itself. A failing write is logged, never thrown: the
 * attempt itself is already recorded.
 */
export function createAfterAttempt(
  options: AfterAttemptOptions,
): (claim: Claim, delivered: Delivered) => Promise<void> {
  const { health, pause, logger } = options;
  return async (claim, delivered) => {
    const { record, outcome, streak, pauseWebhookUntil: until } = delivered;
    // Built only when needed: this runs after every attempt that has something to write.
    const name = () => escapeControl(JSON.stringify(claim.webhook.name));
    if (streak !== undefined) {
      try {
        await health?.afterAttempt({
          webhook: claim.webhook,
          streak,
          deliveryFailed: outcome.state === "failed",
          lastStatus: record.statusCode,
        });
      } catch (error) {
        logger?.warn(
          `Could not record the health of webhook ${name()}: ${escapeControl(errorMessage(error))}`,
        );
      }
    }
    if (until === undefined || !pause) return;
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

/** Whether the judge left anything to write after the result (the usual success leaves nothing). */
export function hasAfterEffects(delivered: Delivered): boolean {
  return delivered.streak !== undefined || delivered.pauseWebhookUntil !== undefined;
}
