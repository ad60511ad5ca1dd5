import { maskUrlPassword } from "../../text/url-credentials.ts";
import type { FinishItem, OperationalEventRecord } from "../ports.ts";

/**
 * The failing notice, as Svix's `message.attempt.failing` and `…recovered`: `webhook.failing`
 * when a delivery's failed attempt is the webhook's `failingNoticeAfter`th (the fourth by
 * default, about 35 minutes into the default schedule), once per failing run, and
 * `webhook.recovered` at the webhook's next successful attempt after it. Both are operational
 * events (operational-events.ts): recorded by the stores' finish in the transaction of the
 * attempt's result, with the webhook's `failing_noticed_at` that makes a run announce once
 * (set by the notice, cleared by the recovery), and never sent to the webhook they are about.
 */

/** Svix's: a message's fourth failed attempt. */
export const DEFAULT_FAILING_NOTICE_AFTER = 4;

/** The largest failingNoticeAfter: WEBHOOK_MAX_ATTEMPTS's own bound. */
export const MAX_FAILING_NOTICE_AFTER = 100;

/** The longest `last_error` a failing notice carries. */
const MAX_ERROR_CHARS = 1000;

/**
 * The webhook.failing an attempt's result would announce, or null: a failed attempt (retried
 * or not) whose number is the webhook's failingNoticeAfter, as the claim read the webhook. The
 * store records it only when no notice of the webhook is open.
 */
export function failingEvent(item: FinishItem): OperationalEventRecord | null {
  const { claim, record, outcome } = item;
  const { delivery, webhook } = claim;
  const after = webhook.failingNoticeAfter ?? DEFAULT_FAILING_NOTICE_AFTER;
  if (outcome.state === "successful" || after === 0 || claim.attempt !== after) return null;
  const data = {
    id: webhook.id,
    name: webhook.name,
    // Sent to other webhooks' receivers: the URL's password is not theirs to read.
    url: maskUrlPassword(webhook.url),
    failing_notice_after: after,
    delivery_id: delivery.id,
    message_id: delivery.messageId,
    event: delivery.event,
    attempt: claim.attempt,
    last_status: record.statusCode,
    last_error: record.error === null ? null : record.error.slice(0, MAX_ERROR_CHARS),
    next_attempt_at:
      outcome.state === "queued" ? new Date(outcome.nextAttemptAt).toISOString() : null,
  };
  return { event: "webhook.failing", notFor: webhook.id, data: JSON.stringify(data) };
}

/** The webhook.recovered of a successful attempt that ended an open failing notice. */
export function recoveredEvent(
  item: Pick<FinishItem, "claim">,
  noticedAt: number,
): OperationalEventRecord {
  const { delivery, webhook } = item.claim;
  const data = {
    id: webhook.id,
    name: webhook.name,
    failing_noticed_at: new Date(noticedAt).toISOString(),
    delivery_id: delivery.id,
    message_id: delivery.messageId,
  };
  return { event: "webhook.recovered", notFor: webhook.id, data: JSON.stringify(data) };
}
