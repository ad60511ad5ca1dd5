import type { Webhook, WebhookPatch } from "../model.ts";
import type { WebhookRepo } from "../ports.ts";

/** How long the previous secret keeps signing after a rotation, by default (Svix's 24 h). */
export const DEFAULT_GRACE_SECONDS = 86_400;
/** The longest grace a rotation takes: a week, as the longest retry delay. */
export const MAX_GRACE_SECONDS = 7 * 86_400;

export interface Rotated {
  webhook: Webhook;
  /** The new secret: shown once, by whoever asked for the rotation. */
  secret: string;
  /** Until when the previous secret signs too (epoch ms); null when there was none, or no grace. */
  previousValidUntil: number | null;
}

/**
 * A new secret for webhook `id`, the current one kept signing beside it for `graceSeconds`
 * (Standard Webhooks: receivers accept a request any of whose signatures matches, so they can
 * switch to the new secret at any time within the grace). A second rotation within the grace
 * drops the oldest secret: only the one just replaced signs beside the new. Grace 0, or a
 * webhook without a secret, ends any overlap at once.
 */
export async function rotateSecret(
  webhooks: Pick<WebhookRepo, "get" | "update">,
  id: number,
  options: { graceSeconds?: number; now: number; generateSecret: () => string },
): Promise<Rotated | null> {
  const before = await webhooks.get(id);
  if (before === null) return null;
  const secret = options.generateSecret();
  const patch = rotationPatch(before, { ...options, secret });
  const webhook = await webhooks.update(id, patch);
  return { webhook, secret, previousValidUntil: patch.previousSecretUntil ?? null };
}

/** The patch rotating `before`'s secret to `secret` (rotateSecret's; the CLI's update too). */
export function rotationPatch(
  before: Pick<Webhook, "secret">,
  options: { secret: string; graceSeconds?: number; now: number },
): WebhookPatch & { secret: string } {
  const grace = options.graceSeconds ?? DEFAULT_GRACE_SECONDS;
  const overlap = before.secret !== null && grace > 0;
  return {
    secret: options.secret,
    previousSecret: overlap ? before.secret : null,
    previousSecretUntil: overlap ? options.now + grace * 1000 : null,
  };
}
