import type { ChangeEvent } from "./types.ts";

/**
 * NetBox's default webhook body, as JSON text: the exact bytes that are stored, signed and sent.
 * `event` is the action ("created", "updated", "deleted", "ping") and `model` the object type,
 * as in NetBox; the subscription name (`item.created`) is `model.event`.
 */
export function buildPayload(change: ChangeEvent): string {
  return JSON.stringify({
    event: actionOf(change.event),
    timestamp: netboxTimestamp(change.timestamp),
    model: change.model,
    username: change.username,
    request_id: change.requestId,
    data: change.data ?? null,
    snapshots: { prechange: change.prechange ?? null, postchange: change.postchange ?? null },
  });
}

/** "item.created" → "created"; names without a dot ("ping") are kept. */
export function actionOf(event: string): string {
  const dot = event.lastIndexOf(".");
  return dot === -1 ? event : event.slice(dot + 1);
}

/** Python's `datetime.isoformat(" ")` in UTC, as NetBox sends: `2021-03-09 17:55:33.968016+00:00`. */
export function netboxTimestamp(date: Date): string {
  const iso = date.toISOString(); // 2021-03-09T17:55:33.968Z
  return `${iso.slice(0, 10)} ${iso.slice(11, 23)}000+00:00`;
}

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/**
 * A Standard Webhooks message id: `msg_` and 24 random base62 characters (~142 bits). Fixed at
 * enqueue so every retry carries the same `webhook-id` and receivers can de-duplicate.
 */
export function newMessageId(
  randomBytes: (n: number) => Uint8Array = (n) => crypto.getRandomValues(new Uint8Array(n)),
): string {
  let id = "msg_";
  // 248 is the largest multiple of 62 below 256: rejecting bytes above it keeps the choice uniform.
  while (id.length < 28) {
    for (const byte of randomBytes(32)) {
      if (byte < 248 && id.length < 28) id += ALPHABET[byte % 62];
    }
  }
  return id;
}
