import type { Logger } from "../../log.ts";
import { escapeControl } from "../../text/control.ts";
import type { Delivered, Streak, Webhook } from "../model.ts";
import type { WebhookHealthRepo } from "../ports.ts";

/** When a failing endpoint is disabled automatically. */
export interface AutoDisableSettings {
  /** Off: streaks are still recorded, nothing is disabled. */
  enabled: boolean;
  /** Every attempt failed for at least this long… */
  failingForMs: number;
  /** …and at least this many deliveries ended `failed` during the streak. */
  minFailedDeliveries: number;
  /** A 410 Gone answer disables at once. */
  onGone: boolean;
}

export const DEFAULT_AUTO_DISABLE: AutoDisableSettings = {
  enabled: true,
  failingForMs: 24 * 3_600_000,
  minFailedDeliveries: 10,
  onGone: true,
};

/**
 * Decides whether a webhook should be disabled after a failed attempt: returns the reason to
 * store, or null to keep sending. Pure: the streak comes from the database.
 */
export function shouldDisable(
  input: Streak & { now: number; lastStatus: number | null },
  settings: AutoDisableSettings = DEFAULT_AUTO_DISABLE,
): string | null {
  if (!settings.enabled) return null;
  if (settings.onGone && input.lastStatus === 410) {
    return "Disabled automatically: the endpoint answered 410 Gone";
  }
  if (input.streakStartedAt === null) return null;
  const failingFor = input.now - input.streakStartedAt;
  if (failingFor < settings.failingForMs) return null;
  if (input.failedDeliveries < settings.minFailedDeliveries) return null;
  const last = input.lastStatus === null ? "" : `; last answer HTTP ${input.lastStatus}`;
  return (
    `Disabled automatically: every attempt failed for ${formatHours(failingFor)} ` +
    `since ${new Date(input.streakStartedAt).toISOString()} ` +
    `(${input.failedDeliveries} failed deliveries${last})`
  );
}

function formatHours(ms: number): string {
  const hours = ms / 3_600_000;
  return hours >= 10 ? `${Math.floor(hours)} h` : `${Math.floor(hours * 10) / 10} h`;
}

/** A webhook's failure streak kept up to date, its store being a WebhookHealthRepo. */
export interface WebhookHealth {
  /**
   * Writes what the judge of an attempt decided for the streak (policy/judge.ts), once the queue
   * accepted the attempt's result: "end" (a success) or "extend" (a failure, which may disable
   * the webhook: the one decision left here, since it needs the streak as stored). Returns the
   * reason when this attempt disabled the webhook, else null.
   */
  afterAttempt(input: {
    webhook: Pick<Webhook, "id" | "name">;
    streak: NonNullable<Delivered["streak"]>;
    /** The delivery ended `failed` (it counts towards the failed deliveries of the streak). */
    deliveryFailed: boolean;
    lastStatus: number | null;
  }): Promise<string | null>;
}

/**
 * Webhook health for the worker: any success ends a webhook's failure streak; a failure extends
 * it and may disable the webhook (its queued deliveries then wait, and resume when re-enabled).
 */
export function createWebhookHealth(options: {
  store: Omit<WebhookHealthRepo, "pause">;
  settings?: AutoDisableSettings;
  now?: () => number;
  logger?: Pick<Logger, "warn">;
}): WebhookHealth {
  const { store, settings = DEFAULT_AUTO_DISABLE, now = Date.now, logger } = options;
  return {
    async afterAttempt({ webhook, streak: change, deliveryFailed, lastStatus }) {
      if (change === "end") {
        await store.recordSuccess(webhook.id);
        return null;
      }
      const t = now();
      const streak = await store.recordFailure(webhook.id, { now: t, deliveryFailed });
      if (streak === null) return null;
      const reason = shouldDisable({ ...streak, now: t, lastStatus }, settings);
      if (reason === null) return null;
      if (!(await store.disable(webhook.id, { reason, now: t }))) return null;
      logger?.warn(`Webhook ${escapeControl(JSON.stringify(webhook.name))}: ${reason}`);
      return reason;
    },
  };
}
