import type { Logger } from "../../log.ts";
import { escapeControl } from "../../text/control.ts";
import { type DisabledKind, disabledEvent } from "../events/operational-events.ts";
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

/** How every reason shouldDisable() gives begins. */
const AUTOMATIC = "Disabled automatically: ";

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
    return `${AUTOMATIC}the endpoint answered 410 Gone`;
  }
  if (input.streakStartedAt === null) return null;
  const failingFor = input.now - input.streakStartedAt;
  if (failingFor < settings.failingForMs) return null;
  if (input.failedDeliveries < settings.minFailedDeliveries) return null;
  const last = input.lastStatus === null ? "" : `; last answer HTTP ${input.lastStatus}`;
  return (
    `${AUTOMATIC}every attempt failed for ${formatHours(failingFor)} ` +
    `since ${new Date(input.streakStartedAt).toISOString()} ` +
    `(${input.failedDeliveries} failed deliveries${last})`
  );
}

/**
 * Why a disabled webhook is off, from its stored reason: "gone" and "failing" are the texts
 * shouldDisable() writes, anything else a person's (or the API's) doing.
 */
export function disabledReasonKind(reason: string | null): DisabledKind | "manual" {
  if (reason?.startsWith(`${AUTOMATIC}the endpoint answered 410`)) return "gone";
  if (reason?.startsWith(AUTOMATIC)) return "failing";
  return "manual";
}

/** Which rule of shouldDisable() disabled a webhook: a 410 answer, or a failure streak. */
export function disabledKind(
  lastStatus: number | null,
  settings: AutoDisableSettings = DEFAULT_AUTO_DISABLE,
): DisabledKind {
  return settings.onGone && lastStatus === 410 ? "gone" : "failing";
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
    webhook: Pick<Webhook, "id" | "name" | "url">;
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
  /** Told of each webhook this disabled (the worker's metrics count them by kind). */
  onDisabled?: (kind: DisabledKind) => void;
}): WebhookHealth {
  const { store, settings = DEFAULT_AUTO_DISABLE, now = Date.now, logger, onDisabled } = options;
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
      const kind = disabledKind(lastStatus, settings);
      // Its webhook.disabled event commits with the disabling (operational-events.ts).
      const announce = disabledEvent(webhook, { reason, kind, at: t });
      if (!(await store.disable(webhook.id, { reason, now: t, announce }))) return null;
      logger?.warn(`Webhook ${escapeControl(JSON.stringify(webhook.name))}: ${reason}`);
      onDisabled?.(kind);
      return reason;
    },
  };
}
