import { MAX_REPLAY } from "../../webhooks/delivery/replay.ts";
import type { DeliveryState } from "../../webhooks/model.ts";

/**
 * Messages shown after a redirect (`?notice=retried&n=7`). Only these keys render, and the one
 * parameter is a number, so a link can not put arbitrary text on an admin page.
 */
const NOTICES = {
  retried: (n) => `Delivery #${n} is queued again; a worker will pick it up.`,
  "not-retried": (n) => `Delivery #${n} is not failed, so it was left as it is.`,
  "retried-all": (n) => `${n} failed ${plural(n, "delivery", "deliveries")} queued again.`,
  "webhook-updated": () => "Webhook saved.",
  "webhook-enabled": () => "Webhook enabled.",
  "webhook-disabled": () => "Webhook disabled: nothing is sent to it until it is enabled again.",
  "webhook-deleted": () => "Webhook deleted, with its deliveries.",
  replayed: (n) =>
    `${n ?? 0} ${plural(n, "delivery", "deliveries")} queued to be sent again; a worker will send ${n === 1 ? "it" : "them"}.`,
  "replayed-cut": (n) =>
    `Replay cut at ${MAX_REPLAY.toLocaleString("en")} deliveries, the oldest first: more matched. Replay again from ${n === null ? "the last one's time" : new Date(n).toISOString()} for the rest.`,
  "test-queued": (n) => `Test delivery #${n} (event ping) queued.`,
  "test-not-queued": () => "Nothing was queued: a disabled webhook gets no deliveries.",
  "item-created": (n) => `Item created; ${queuedText(n)}.`,
  "item-updated": (n) => `Item updated; ${queuedText(n)}.`,
  "item-unchanged": () => "Nothing changed, so no webhook was queued.",
  "item-deleted": (n) => `Item deleted; ${queuedText(n)}.`,
} satisfies Record<string, (n: number | null) => string>;

export type NoticeKey = keyof typeof NOTICES;

export function noticeText(key: string | undefined, n: string | undefined): string | null {
  // hasOwn: `?notice=constructor` must not reach Object.prototype.
  if (key === undefined || !Object.hasOwn(NOTICES, key)) return null;
  const message = NOTICES[key as NoticeKey];
  const count = n !== undefined && /^\d{1,15}$/.test(n) ? Number(n) : null;
  return message(count);
}

export function withNotice(path: string, key: NoticeKey, n?: number): string {
  // Replaces a notice the path may already carry (a form's return_to is the page it was on).
  const url = new URL(path, "http://admin.invalid");
  url.searchParams.set("notice", key);
  if (n === undefined) url.searchParams.delete("n");
  else url.searchParams.set("n", String(n));
  return `${url.pathname}${url.search}`;
}

function queuedText(n: number | null): string {
  const count = n ?? 0;
  return `${count} webhook ${plural(count, "delivery", "deliveries")} queued`;
}

function plural(n: number | null, one: string, many: string): string {
  return n === 1 ? one : many;
}

/**
 * The notice after Retry, from the delivery's state when the page is drawn: a worker may have
 * taken it, and failed it again, between the click and this page, and "queued again" beside a
 * fresh "failed" badge would read as a contradiction.
 */
export function retriedText(id: number, state: DeliveryState | null): string {
  switch (state) {
    case "queued":
      return `Delivery #${id} is queued again; a worker will pick it up.`;
    case "delivering":
      return `Delivery #${id} was queued again and a worker is sending it now.`;
    case "successful":
      return `Delivery #${id} was retried and delivered.`;
    case "failed":
      return `Delivery #${id} was retried and failed again: see its newest attempt.`;
    default:
      return `Delivery #${id} was queued again.`;
  }
}
