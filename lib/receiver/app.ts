import { Hono } from "hono";
import ipaddr from "ipaddr.js";
import { escapeControl } from "../text/control.ts";
import { errorMessage } from "../text/error-message.ts";
import { beginStandardWebhookCheck } from "../webhooks/sending/signing.ts";
import { readBody } from "./body.ts";
import { formatRequest, type ReceivedRequest } from "./format.ts";

/** Bodies larger than this are printed cut, with a note. */
export const BODY_LIMIT_BYTES = 64 * 1024;

export interface ReceiverOptions {
  /** Called once per request with the whole block (no trailing newline), like console.log. */
  print: (text: string) => void;
  showHeaders: boolean;
  pretty: boolean;
  /**
   * `whsec_` secrets: print whether each request's Standard Webhooks signature is valid, by
   * any of them (during a rotation's overlap a request carries the new and the old).
   */
  secrets?: readonly string[];
  now?: () => Date;
}

/** What the app needs from its env: Bun passes its Server, whose requestIP gives the peer. */
export interface ReceiverBindings {
  requestIP?: (request: Request) => { address: string } | null;
}

/**
 * NetBox's troubleshooting receiver as a Hono app: any method on any path is answered 200
 * `Webhook received!` and printed with formatRequest. Requests are numbered from 1 in the order
 * they are printed. No side effects: the caller serves it (`Bun.serve({ fetch: app.fetch })`).
 */
export function createReceiver(options: ReceiverOptions): Hono<{ Bindings: ReceiverBindings }> {
  const now = options.now ?? (() => new Date());
  const app = new Hono<{ Bindings: ReceiverBindings }>();
  let counter = 0;

  app.all("*", async (c) => {
    const date = now();
    const request = c.req.raw;
    // The signature headers and timestamp are checked before the body is read; the body is then
    // hashed as it streams in, so only the part shown is ever held (not 50 MB per request).
    const check =
      options.secrets === undefined
        ? undefined
        : beginStandardWebhookCheck(options.secrets, request.headers, date.getTime());
    let body: { bytes: Uint8Array; size: number } = { bytes: new Uint8Array(0), size: 0 };
    let bodyError: string | undefined;
    try {
      const onChunk =
        check && check.early === null ? (chunk: Uint8Array) => check.update(chunk) : undefined;
      body = await readBody(request, BODY_LIMIT_BYTES, onChunk);
    } catch (error) {
      bodyError = errorMessage(error);
    }
    const received: ReceivedRequest = {
      counter: 0,
      date,
      clientAddress: clientAddress(c.env?.requestIP?.(request)?.address),
      method: request.method,
      target: requestTarget(request.url),
      headers: [...request.headers],
      body: body.bytes,
      size: body.size,
      bodyError,
      signature: check === undefined || bodyError !== undefined ? undefined : check.result(),
    };
    counter += 1;
    received.counter = counter;
    options.print(formatRequest(received, options));
    return c.text("Webhook received!");
  });

  // Nothing a peer sends should end in a stack trace: say so in one line and answer 400.
  app.onError((error, c) => {
    const message = errorMessage(error);
    options.print(`Bad request: ${escapeControl(message.replace(/\s+/g, " "))}\n------------`);
    return c.text("Bad request\n", 400);
  });

  return app;
}

/**
 * Path and query of the request line. Bun builds an absolute URL from the Host header; without
 * one (HTTP/1.0) it hands the target as sent.
 */
function requestTarget(url: string): string {
  if (!URL.canParse(url)) return url;
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
}

/** The peer's address as NetBox prints it: an IPv4-mapped IPv6 address as plain IPv4. */
export function clientAddress(address: string | undefined): string {
  if (address === undefined || address === "") return "-";
  if (ipaddr.IPv6.isValid(address)) {
    const parsed = ipaddr.IPv6.parse(address);
    if (parsed.isIPv4MappedAddress()) return parsed.toIPv4Address().toString();
  }
  return address;
}
