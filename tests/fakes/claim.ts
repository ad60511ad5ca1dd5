import type { Claim, Delivery, Webhook } from "../../lib/webhooks/model.ts";
import { webhookFixture } from "./webhook.ts";

/** What a test changes of the one Claim fixture; the rest is a claim as a worker holds one. */
export interface ClaimFixtureOptions {
  /** The delivery's id (default 1). */
  id?: number;
  delivery?: Partial<Delivery>;
  webhook?: Partial<Webhook>;
  /** The attempt this claim makes (the delivery's `attempts` too; default 1). */
  attempt?: number;
  workerId?: string;
  notBefore?: number;
}

/**
 * A claim on a delivering item.created delivery of `webhookFixture()`, leased to worker "w" for
 * its first attempt, as the store's claim returns one: the one Claim fixture of the tests.
 */
export function claimFixture(options: ClaimFixtureOptions = {}): Claim {
  const webhook = webhookFixture(options.webhook);
  const attempt = options.attempt ?? 1;
  const workerId = options.workerId ?? "w";
  const delivery: Delivery = {
    id: options.id ?? 1,
    webhookId: webhook.id,
    webhookName: webhook.name,
    messageId: "msg_0123456789abcdefghijklmn",
    event: "item.created",
    payload: '{"event":"created","data":{"id":1}}',
    url: null,
    headers: null,
    context: null,
    templateFailed: false,
    renderPending: false,
    ordered: false,
    objectModel: "item",
    objectId: 1,
    state: "delivering",
    attempts: attempt,
    nextAttemptAt: 0,
    leaseOwner: workerId,
    leaseExpiresAt: null,
    lastStatus: null,
    lastError: null,
    createdAt: 0,
    updatedAt: 0,
    completedAt: null,
    ...options.delivery,
  };
  const claim: Claim = { delivery, webhook, attempt, workerId, generation: 1 };
  if (options.notBefore !== undefined) claim.notBefore = options.notBefore;
  return claim;
}
