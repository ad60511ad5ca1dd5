import type { ChangeEvent } from "../model.ts";

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
const TIME_DIGITS = 8; // 62^8 ms reach past the year 8000
const RANDOM_CHARS = 16; // ~95 bits

const pool = new Uint8Array(4096);
let poolOffset = pool.length;

/** Random bytes from a buffer refilled 4 KiB at a time (one getRandomValues per ~100 ids). */
function pooledRandomBytes(n: number): Uint8Array {
  if (poolOffset + n > pool.length) {
    crypto.getRandomValues(pool);
    poolOffset = 0;
  }
  poolOffset += n;
  return pool.subarray(poolOffset - n, poolOffset);
}

let prefixTime = -1;
let prefix = "";

/** `msg_` and the time digits, kept for the millisecond (ids come in bursts). */
function timePrefix(now: number): string {
  const ms = Math.max(0, Math.floor(now));
  if (ms !== prefixTime) {
    let digits = "";
    let rest = ms;
    for (let i = 0; i < TIME_DIGITS; i++) {
      digits = ALPHABET[rest % 62] + digits;
      rest = Math.floor(rest / 62);
    }
    prefixTime = ms;
    prefix = `msg_${digits}`;
  }
  return prefix;
}

/**
 * A Standard Webhooks message id: `msg_`, the time in milliseconds as 8 base62 digits, then 16
 * random base62 characters (~95 bits), 24 characters in all like before. Fixed at enqueue so
 * every retry carries the same `webhook-id` and receivers can de-duplicate; unique across
 * databases by its random part. Time first (as Svix's KSUID-based ids): ids made later sort
 * later, so the unique index on message_id grows at its end instead of taking a random page
 * per insert.
 */
export function newMessageId(
  randomBytes: (n: number) => Uint8Array = pooledRandomBytes,
  now: number = Date.now(),
): string {
  let random = "";
  // 248 is the largest multiple of 62 below 256: rejecting bytes above it keeps the choice uniform.
  while (random.length < RANDOM_CHARS) {
    for (const byte of randomBytes(24)) {
      if (byte < 248 && random.length < RANDOM_CHARS) random += ALPHABET[byte % 62];
    }
  }
  return timePrefix(now) + random;
}

/**
 * The object a change is about (NetBox's content type and object id), recorded on its
 * deliveries so an object's deliveries are found without reading bodies: the change's model and
 * its data's integer `id`; null for a ping or data without one.
 */
export function changedObject(change: ChangeEvent): { model: string; id: number } | null {
  if (change.event === "ping") return null;
  const id = (change.data as { id?: unknown } | null | undefined)?.id;
  return typeof id === "number" && Number.isSafeInteger(id) ? { model: change.model, id } : null;
}
