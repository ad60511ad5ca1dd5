import type { Webhook, WebhookPatch } from "../webhooks/model.ts";
import {
  formatRetrySchedule,
  type RetrySchedule,
  scheduleAttempts,
  storedRetrySchedule,
} from "../webhooks/policy/retry-schedule.ts";

/** Webhook columns worked out the same way by both stores. */

/** A schedule's two columns: as text, and the attempts it makes by itself (both stores). */
export function retryColumns(schedule: RetrySchedule | undefined): {
  retry_schedule: string;
  retry_attempts: number | null;
} {
  const value = schedule ?? storedRetrySchedule(null);
  return { retry_schedule: formatRetrySchedule(value), retry_attempts: scheduleAttempts(value) };
}

/**
 * The previous secret after a patch: a rotation's, cleared by any other new secret (a secret
 * typed or removed ends the grace period), else kept.
 */
export function previousSecretColumns(
  before: Webhook,
  patch: WebhookPatch,
): { previous_secret: string | null; previous_secret_until: number | null } {
  if (patch.previousSecret !== undefined) {
    const until = patch.previousSecret === null ? null : (patch.previousSecretUntil ?? null);
    return { previous_secret: patch.previousSecret, previous_secret_until: until };
  }
  if (patch.secret !== undefined && patch.secret !== before.secret) {
    return { previous_secret: null, previous_secret_until: null };
  }
  return {
    previous_secret: before.previousSecret,
    previous_secret_until: before.previousSecretUntil,
  };
}
