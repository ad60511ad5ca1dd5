import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * Request signing: Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`)
 * and NetBox's `X-Hook-Signature`. Synchronous node:crypto HMACs: a few microseconds each.
 */

const SECRET_PREFIX = "whsec_";
/** Verifiers reject timestamps further than this from their clock (Standard Webhooks: 5 minutes). */
export const TIMESTAMP_TOLERANCE_SECONDS = 5 * 60;
const MIN_SECRET_BYTES = 16;
const MAX_SECRET_BYTES = 64;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export type VerifyResult = { valid: true } | { valid: false; reason: string };

/** A new secret: `whsec_` + base64 of 24 random bytes (192 bits, as Svix generates). */
export function generateSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(24).toString("base64")}`;
}

/**
 * Whether `secret` is one we accept for a webhook or `--secret`: `whsec_` followed by padded
 * standard base64 that decodes to 16–64 bytes. 16 bytes (128 bits) is the least that is still a
 * strong HMAC key; the Standard Webhooks spec recommends 24–64.
 */
export function isValidSecret(secret: string): boolean {
  if (!secret.startsWith(SECRET_PREFIX)) return false;
  const key = decodeKey(secret);
  return key !== null && key.length >= MIN_SECRET_BYTES && key.length <= MAX_SECRET_BYTES;
}

/**
 * The Standard Webhooks headers of one attempt. `webhook-signature` is `v1,` + base64
 * HMAC-SHA256 of `${messageId}.${timestamp}.${body}`, keyed with the base64-decoded part of the
 * secret after `whsec_`; it is present only when a secret is set. Throws a TypeError for a
 * secret that is not base64 (check with isValidSecret when the secret is stored).
 */
export function standardWebhookHeaders(input: {
  secret: string | null;
  messageId: string;
  /** Unix seconds of this attempt. */
  timestamp: number;
  body: string;
}): Record<string, string> {
  const timestamp = String(Math.floor(input.timestamp));
  const headers: Record<string, string> = {
    "webhook-id": input.messageId,
    "webhook-timestamp": timestamp,
  };
  if (input.secret !== null) {
    const key = decodeKey(input.secret);
    if (key === null) {
      throw new TypeError("Webhook secret is invalid: expected whsec_ followed by base64");
    }
    headers["webhook-signature"] =
      `v1,${signatureBytes(key, input.messageId, timestamp, input.body).toString("base64")}`;
  }
  return headers;
}

/** Both signatures of one webhook secret, for many messages. */
export interface Signer {
  /** `v1,` + base64 HMAC-SHA256 of `${messageId}.${timestamp}.${body}` (webhook-signature). */
  standard(messageId: string, timestamp: string, body: string): string;
  /** Hex HMAC-SHA512 of the body keyed with the secret as typed (X-Hook-Signature). */
  netbox(body: string): string;
}

/**
 * A Signer for `secret`, with the same results as standardWebhookHeaders and netboxSignature:
 * the keys are decoded and the keyed hashes set up once, then copied for each message (a
 * worker signs thousands of requests a second with a handful of secrets). Throws a TypeError
 * for a secret that is not base64.
 */
export function createSigner(secret: string): Signer {
  const key = decodeKey(secret);
  if (key === null) {
    throw new TypeError("Webhook secret is invalid: expected whsec_ followed by base64");
  }
  const sha256 = new Bun.CryptoHasher("sha256", key);
  const sha512 = new Bun.CryptoHasher("sha512", Buffer.from(secret, "utf8"));
  return {
    standard: (messageId, timestamp, body) =>
      `v1,${sha256.copy().update(`${messageId}.${timestamp}.`).update(body).digest("base64")}`,
    netbox: (body) => sha512.copy().update(body).digest("hex"),
  };
}

/**
 * NetBox's `X-Hook-Signature`: hex HMAC-SHA512 of the exact body bytes, keyed with the secret
 * string's UTF-8 bytes (NetBox uses the secret as typed, not base64-decoded).
 */
export function netboxSignature(secret: string, body: string | Uint8Array): string {
  return createHmac("sha512", Buffer.from(secret, "utf8")).update(body).digest("hex");
}

/**
 * Checks a request's Standard Webhooks signature as a receiver would: any of the
 * space-separated `v1,` signatures may match (key rotation), compared in constant time, and the
 * timestamp must be within 5 minutes of `nowMs` (epoch milliseconds, default Date.now()).
 */
export function verifyStandardWebhook(
  secret: string,
  body: string | Uint8Array,
  headers: Headers | Record<string, string>,
  nowMs: number = Date.now(),
): VerifyResult {
  const check = beginStandardWebhookCheck(secret, headers, nowMs);
  check.update(body);
  return check.result();
}

/** A signature check fed the body piece by piece, so a receiver never holds a whole body. */
export interface SignatureCheck {
  /** The verdict already known from the headers alone (missing, stale), or null. */
  readonly early: VerifyResult | null;
  update(chunk: string | Uint8Array): void;
  /** The verdict once the whole body went through update(); call once. */
  result(): VerifyResult;
}

/**
 * verifyStandardWebhook in two steps: the headers and timestamp are checked first (before any
 * body is read), then the body is hashed as it arrives. With several secrets (a receiver during
 * a rotation's overlap), a signature matching any of them is valid.
 */
export function beginStandardWebhookCheck(
  secret: string | readonly string[],
  headers: Headers | Record<string, string>,
  nowMs: number = Date.now(),
): SignatureCheck {
  const decided = (verdict: VerifyResult): SignatureCheck => ({
    early: verdict,
    update() {},
    result: () => verdict,
  });
  const keys = (typeof secret === "string" ? [secret] : secret).map(decodeKey);
  if (keys.length === 0 || keys.some((key) => key === null)) {
    return decided({ valid: false, reason: "the secret is not whsec_ + base64" });
  }

  const get = headerGetter(headers);
  const id = get("webhook-id");
  const timestamp = get("webhook-timestamp");
  const signatures = get("webhook-signature");
  if (id === undefined || timestamp === undefined || signatures === undefined) {
    const missing = Object.entries({ id, timestamp, signature: signatures })
      .filter(([, value]) => value === undefined)
      .map(([name]) => `webhook-${name}`);
    return decided({ valid: false, reason: `missing header: ${missing.join(", ")}` });
  }

  if (!/^\d{1,15}$/.test(timestamp)) {
    return decided({ valid: false, reason: "webhook-timestamp is not unix seconds" });
  }
  const age = Math.floor(nowMs / 1000) - Number(timestamp);
  if (age > TIMESTAMP_TOLERANCE_SECONDS) {
    return decided({ valid: false, reason: `timestamp too old: ${age} s ago` });
  }
  if (age < -TIMESTAMP_TOLERANCE_SECONDS) {
    return decided({ valid: false, reason: `timestamp too new: ${-age} s ahead` });
  }

  const hmacs = keys.map((key) =>
    createHmac("sha256", key as Buffer).update(`${id}.${timestamp}.`),
  );
  return {
    early: null,
    update(chunk) {
      for (const hmac of hmacs) hmac.update(chunk);
    },
    result() {
      const expected = hmacs.map((hmac) => Buffer.from(hmac.digest().toString("base64")));
      for (const entry of signatures.split(" ")) {
        const [version, signature] = entry.split(",", 2);
        if (version !== "v1" || signature === undefined) continue;
        const given = Buffer.from(signature);
        const matches = (wanted: Buffer) =>
          given.length === wanted.length && timingSafeEqual(given, wanted);
        if (expected.some(matches)) return { valid: true };
      }
      return { valid: false, reason: "no matching signature" };
    },
  };
}

function signatureBytes(
  key: Buffer,
  id: string,
  timestamp: string,
  body: string | Uint8Array,
): Buffer {
  return createHmac("sha256", key).update(`${id}.${timestamp}.`).update(body).digest();
}

/** The HMAC key of a secret: base64 after an optional `whsec_` (as the reference library). */
function decodeKey(secret: string): Buffer | null {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  if (encoded === "" || !BASE64.test(encoded)) return null;
  return Buffer.from(encoded, "base64");
}

function headerGetter(
  headers: Headers | Record<string, string>,
): (name: string) => string | undefined {
  if (headers instanceof Headers) return (name) => headers.get(name) ?? undefined;
  const lower = new Map(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return (name) => lower.get(name);
}
