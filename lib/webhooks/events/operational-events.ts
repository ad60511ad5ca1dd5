import { maskUrlPassword } from "../../text/url-credentials.ts";
import type { ChangeEvent, ChangePlan, Webhook } from "../model.ts";
import type {
  FinishItem,
  OperationalEventRecord,
  Store,
  StoredOperationalEvent,
} from "../ports.ts";
import { isOperationalEvent } from "./events.ts";

/**
 * Operational events, as Svix's `endpoint.disabled` and `message.attempt.exhausted`: a webhook
 * was disabled (automatically or by hand), a delivery's attempts ran out; and the failing notice
 * (failing-notices.ts): a webhook's attempts are failing, and then it recovered. Any other webhook that names the
 * event gets it, in NetBox's body shape (`model` "webhook" or "delivery", the facts in `data`),
 * so its templates and conditions work as for item changes.
 *
 * Nothing is lost: the event is recorded in the same transaction as the state change that
 * causes it (the delivery's last result, the webhook's disabling), then a worker fans it out
 * with the usual enqueue, removing the record in the same transaction. No loop: a delivery of
 * an operational event that runs out of attempts announces nothing, and an event never goes to
 * the webhook it is about.
 */

/** The longest `last_error` an exhausted event carries. */
const MAX_ERROR_CHARS = 1000;

/** A delivery that ended `failed` after an attempt: its delivery.exhausted, or null. */
export function exhaustedEvent(item: FinishItem): OperationalEventRecord | null {
  const { claim, record, outcome } = item;
  const { delivery } = claim;
  if (outcome.state !== "failed" || isOperationalEvent(delivery.event)) return null;
  const data = {
    id: delivery.id,
    message_id: delivery.messageId,
    event: delivery.event,
    webhook_id: delivery.webhookId,
    webhook_name: claim.webhook.name,
    attempts: claim.attempt,
    last_status: record.statusCode,
    last_error: record.error === null ? null : record.error.slice(0, MAX_ERROR_CHARS),
    object_model: delivery.objectModel,
    object_id: delivery.objectId,
  };
  return { event: "delivery.exhausted", notFor: delivery.webhookId, data: JSON.stringify(data) };
}

/** Why a webhook was disabled automatically, as a metric label: a 410 answer or a streak. */
export type DisabledKind = "gone" | "failing";

/**
 * A webhook disabled: its webhook.disabled. `manual`: by a person, the CLI or the API (as
 * Svix's endpoint.disabled tells both); the others by a worker.
 */
export function disabledEvent(
  webhook: Pick<Webhook, "id" | "name" | "url">,
  disabled: { reason: string; kind: DisabledKind | "manual"; at: number },
): OperationalEventRecord {
  const data = {
    id: webhook.id,
    name: webhook.name,
    // Sent to other webhooks' receivers: the URL's password is not theirs to read.
    url: maskUrlPassword(webhook.url),
    reason: disabled.reason,
    reason_kind: disabled.kind,
    disabled_at: new Date(disabled.at).toISOString(),
  };
  return { event: "webhook.disabled", notFor: webhook.id, data: JSON.stringify(data) };
}

/** A recorded event as the change the usual enqueue fans out. */
export function operationalChange(stored: StoredOperationalEvent, requestId: string): ChangeEvent {
  return {
    event: stored.event,
    model: stored.event.startsWith("webhook.") ? "webhook" : "delivery",
    username: "worker",
    requestId,
    timestamp: new Date(stored.createdAt),
    data: JSON.parse(stored.data),
    prechange: null,
    postchange: null,
    notFor: stored.notFor,
  };
}

/**
 * Fans out the recorded operational events, `batchSize` per transaction (taken and enqueued
 * together, so an event is fanned out exactly once, whichever worker takes it). Their templates
 * render first, from the events as read, with no transaction open (queue.plan); an event taken
 * by another worker meanwhile costs a wasted plan, and one not planned is rendered at insert.
 * Returns how many were fanned out.
 */
export async function relayOperationalEvents(
  store: Pick<Store, "transaction" | "events" | "queue">,
  options: { batchSize?: number; randomUUID?: () => string } = {},
): Promise<number> {
  const { batchSize = 100, randomUUID = () => crypto.randomUUID() } = options;
  let total = 0;
  while (await store.events.hasPending()) {
    const planned = new Map<number, { change: ChangeEvent; plan: ChangePlan }>();
    for (const event of await store.events.peek(batchSize)) {
      const change = operationalChange(event, randomUUID());
      planned.set(event.id, { change, plan: await store.queue.plan(change) });
    }
    const taken = await store.transaction(async (tx) => {
      const events = await tx.events.take(batchSize);
      for (const event of events) {
        const ahead = planned.get(event.id);
        const change = ahead?.change ?? operationalChange(event, randomUUID());
        await tx.queue.enqueue(change, { plan: ahead?.plan });
      }
      return events.length;
    });
    total += taken;
    if (taken < batchSize) break;
  }
  return total;
}
