import { VERSION } from "../../version.ts";
import type { Delivery, Webhook } from "../model.ts";
import { createSigner, type Signer } from "./signing.ts";

export const USER_AGENT = `hn-digest-webhooks/${VERSION}`;

export interface OutgoingRequest {
  url: string;
  method: string;
  /** In sending order; names as given. */
  headers: Array<[string, string]>;
  /** null for GET, which fetch cannot send with a body. */
  body: string | null;
}

/** Set by the sender itself: an extra header of the same name never replaces them. */
const SIGNATURE_HEADERS = new Set([
  "webhook-id",
  "webhook-timestamp",
  "webhook-signature",
  "x-hook-signature",
]);

/** What one webhook's requests share, worked out once (a worker sends many per webhook). */
interface Prepared {
  userAgent: string;
  /** Content type, user agent and extra headers, signature headers left out. */
  headers: Array<[string, string]>;
  signer: Signer | null;
  /** The secret before a rotation, signing beside `signer` until `previousUntil`. */
  previous: Signer | null;
  previousUntil: number;
}

// Webhooks are immutable values (a claim carries the row as read), so a webhook object's
// headers can be kept with it; signers are kept per secret, as a secret's keys never change.
const prepared = new WeakMap<Webhook, Prepared>();
const signers = new Map<string, Signer>();
const MAX_SIGNERS = 1000;

function prepare(webhook: Webhook, userAgent: string): Prepared {
  const known = prepared.get(webhook);
  if (known && known.userAgent === userAgent) return known;
  const entry = {
    userAgent,
    headers: baseHeaders(webhook.contentType, userAgent, webhook.headers),
    signer: signerOf(webhook.secret),
    previous: webhook.secret === null ? null : signerOf(webhook.previousSecret ?? null),
    previousUntil: webhook.previousSecretUntil ?? 0,
  };
  prepared.set(webhook, entry);
  return entry;
}

/** Content type, user agent and the extra headers (replacing those two), never a signature. */
function baseHeaders(
  contentType: string,
  userAgent: string,
  extra: ReadonlyArray<[string, string]>,
): Array<[string, string]> {
  const headers = new Map<string, [string, string]>();
  const set = (name: string, value: string) => headers.set(name.toLowerCase(), [name, value]);
  set("Content-Type", contentType);
  set("User-Agent", userAgent);
  for (const [name, value] of extra) {
    if (!SIGNATURE_HEADERS.has(name.toLowerCase())) set(name, value);
  }
  return [...headers.values()];
}

function signerOf(secret: string | null): Signer | null {
  if (secret === null) return null;
  let signer = signers.get(secret);
  if (!signer) {
    signer = createSigner(secret); // throws for a secret that cannot sign: nothing is sent
    if (signers.size >= MAX_SIGNERS) signers.clear();
    signers.set(secret, signer);
  }
  return signer;
}

/**
 * The request for one attempt, as a plain value: the webhook's method, content type and extra
 * headers (or those rendered for the delivery), its URL (or the rendered one), the stored
 * payload as the body, and the signature headers last so an extra header
 * cannot replace them. `timestamp` is the attempt's unix time in seconds. A GET carries no body
 * (fetch refuses one), so its signatures are of the empty body it sends. Within a rotation's
 * grace period (the attempt's time before `previousSecretUntil`) `webhook-signature` carries the
 * new secret's signature and the previous one's, space-separated (Standard Webhooks); NetBox's
 * `X-Hook-Signature` has one value, the new secret's. Signed at send, so a delivery queued
 * before a rotation carries both. Throws a TypeError for a secret that cannot sign.
 */
export function buildRequest(
  webhook: Webhook,
  delivery: Pick<Delivery, "messageId" | "payload"> & Partial<Pick<Delivery, "url" | "headers">>,
  timestamp: number,
  options: { userAgent?: string } = {},
): OutgoingRequest {
  const userAgent = options.userAgent ?? USER_AGENT;
  const { headers: shared, signer, previous, previousUntil } = prepare(webhook, userAgent);
  // Headers rendered at enqueue (templated values) are this delivery's own.
  const base = delivery.headers
    ? baseHeaders(webhook.contentType, userAgent, delivery.headers)
    : shared;
  const body = webhook.method === "GET" ? null : delivery.payload;
  const signedBody = body ?? "";
  const seconds = String(Math.floor(timestamp));
  const headers = base.slice();
  headers.push(["webhook-id", delivery.messageId], ["webhook-timestamp", seconds]);
  if (signer !== null) {
    let signature = signer.standard(delivery.messageId, seconds, signedBody);
    if (previous !== null && timestamp * 1000 < previousUntil) {
      signature += ` ${previous.standard(delivery.messageId, seconds, signedBody)}`;
    }
    headers.push(["webhook-signature", signature], ["X-Hook-Signature", signer.netbox(signedBody)]);
  }
  return { url: delivery.url ?? webhook.url, method: webhook.method, headers, body };
}
