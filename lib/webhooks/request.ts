import pkg from "../../package.json" with { type: "json" };
import { netboxSignature, standardWebhookHeaders } from "./signing.ts";
import type { Delivery, Webhook } from "./types.ts";

export const VERSION: string = pkg.version;
export const USER_AGENT = `hn-digest-webhooks/${VERSION}`;

export interface OutgoingRequest {
  url: string;
  method: string;
  /** In sending order; names as given. */
  headers: Array<[string, string]>;
  /** null for GET, which fetch cannot send with a body. */
  body: string | null;
}

/**
 * The request for one attempt, as a plain value: the webhook's method, content type and extra
 * headers, the stored payload as the body, and the signature headers last so an extra header
 * cannot replace them. `timestamp` is the attempt's unix time in seconds. A GET carries no body
 * (fetch refuses one), so its signatures are of the empty body it sends.
 */
export function buildRequest(
  webhook: Webhook,
  delivery: Pick<Delivery, "messageId" | "payload">,
  timestamp: number,
  options: { userAgent?: string } = {},
): OutgoingRequest {
  const body = webhook.method === "GET" ? null : delivery.payload;
  const signedBody = body ?? "";
  const headers = new Map<string, [string, string]>();
  const set = (name: string, value: string) => headers.set(name.toLowerCase(), [name, value]);
  set("Content-Type", webhook.contentType);
  set("User-Agent", options.userAgent ?? USER_AGENT);
  for (const [name, value] of webhook.headers) set(name, value);
  const signed = standardWebhookHeaders({
    secret: webhook.secret,
    messageId: delivery.messageId,
    timestamp,
    body: signedBody,
  });
  for (const [name, value] of Object.entries(signed)) set(name, value);
  if (webhook.secret !== null) {
    set("X-Hook-Signature", netboxSignature(webhook.secret, signedBody));
  }
  return {
    url: webhook.url,
    method: webhook.method,
    headers: [...headers.values()],
    body,
  };
}
