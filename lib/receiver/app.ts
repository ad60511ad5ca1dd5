import { Hono } from "hono";
import ipaddr from "ipaddr.js";
import { verifyStandardWebhook } from "../webhooks/signing.ts";
import { readBody } from "./body.ts";
import { formatRequest, type ReceivedRequest } from "./format.ts";

/** Bodies larger than this are printed cut, with a note. */
export const BODY_LIMIT_BYTES = 64 * 1024;

export interface ReceiverOptions {
  /** Called once per request with the whole block (no trailing newline), like console.log. */
  print: (text: string) => void;
  showHeaders: boolean;
  pretty: boolean;
  /** A `whsec_` secret: print whether each request's Standard Webhooks signature is valid. */
  secret?: string;
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
    const url = new URL(request.url);
    // The whole body is needed to check a signature; otherwise keep only what is shown.
    const keep = options.secret === undefined ? BODY_LIMIT_BYTES : Number.POSITIVE_INFINITY;
    let body: { bytes: Uint8Array; size: number } = { bytes: new Uint8Array(0), size: 0 };
    let bodyError: string | undefined;
    try {
      body = await readBody(request, keep);
    } catch (error) {
      bodyError = error instanceof Error ? error.message : String(error);
    }
    const received: ReceivedRequest = {
      counter: 0,
      date,
      clientAddress: clientAddress(c.env?.requestIP?.(request)?.address),
      method: request.method,
      target: `${url.pathname}${url.search}`,
      headers: [...request.headers],
      body: body.bytes.subarray(0, BODY_LIMIT_BYTES),
      size: body.size,
      bodyError,
      signature:
        options.secret === undefined || bodyError !== undefined
          ? undefined
          : verifyStandardWebhook(options.secret, body.bytes, request.headers, date.getTime()),
    };
    counter += 1;
    received.counter = counter;
    options.print(formatRequest(received, options));
    return c.text("Webhook received!");
  });

  return app;
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
