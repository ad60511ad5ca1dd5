import type { MiddlewareHandler } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { IdempotencyKeys } from "../../webhooks/ports.ts";
import type { AppEnv } from "../context.ts";

/** How long a key answers with its first answer (Stripe's and Svix's 24 hours). */
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
/**
 * How long a key stays taken by a request that has not answered yet. A request cut off before
 * its answer (a stop's drain ran out, a crash) never frees its key; past this the key is free
 * again, rather than answering "still being handled" for 24 hours. Far longer than any request
 * takes (the longest, a bulk retry or replay, is paced in chunks and done in seconds).
 */
export const IDEMPOTENCY_PENDING_MS = 10 * 60_000;
/** A key: 1 to 255 printable ASCII characters, no spaces (a UUID fits). */
const KEY = /^[\x21-\x7e]{1,255}$/;
/** Answer headers a repeat gets back as the first request got them. */
const KEPT_HEADERS = ["content-type", "location"];

/**
 * `Idempotency-Key` on the API's POSTs: the first request with a key runs and its answer is kept
 * for 24 hours; the same key with the same request (method, path, body) gets that answer again,
 * marked `Idempotent-Replayed: true`, without running anything twice; with another request, 409.
 * A repeat while the first still runs is 409 too (try again), for at most IDEMPOTENCY_PENDING_MS:
 * a request cut off before its answer frees its key then. An answer of 5xx is not kept, so a
 * repeat runs again. Keys are per credential (the admin, each API token by its hash, so a new
 * token given a revoked one's name is another): two clients never meet.
 * A body over `maxBodyBytes` is left to the route (413) and keeps no key.
 */
export function idempotencyMiddleware(options: {
  keys: IdempotencyKeys;
  now: () => number;
  maxBodyBytes: number;
}): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const key = c.req.header("idempotency-key");
    if (c.req.method !== "POST" || key === undefined) return next();
    if (!KEY.test(key)) {
      return c.json(
        { error: "Idempotency-Key must be 1 to 255 printable ASCII characters without spaces" },
        400,
      );
    }
    const body = await boundedBody(c.req.raw.clone(), options.maxBodyBytes);
    if (body === null) return next();
    const scope = c.get("credential");
    const fingerprint = await fingerprintOf(c.req.method, c.req.path, body);
    const now = options.now();
    const found = await options.keys.begin(scope, key, {
      fingerprint,
      now,
      expiresAt: now + IDEMPOTENCY_PENDING_MS,
    });
    if (found !== null) {
      if (found.fingerprint !== fingerprint) {
        return c.json(
          { error: "Idempotency-Key was already used with another request (method, path or body)" },
          409,
        );
      }
      if (found.answer === null) {
        return c.json(
          {
            error: `A request with this Idempotency-Key is still being handled: try again (a request cut off before its answer frees its key ${IDEMPOTENCY_PENDING_MS / 60_000} minutes after it began)`,
          },
          409,
        );
      }
      const { status, headers, body: text } = found.answer;
      // Through the context, so what earlier middleware set (X-Request-Id) is kept.
      return c.body(text, status as ContentfulStatusCode, {
        ...headers,
        "idempotent-replayed": "true",
      });
    }
    try {
      await next();
    } catch (error) {
      await options.keys.abandon(scope, key);
      throw error;
    }
    const answer = c.res;
    if (answer.status >= 500) {
      await options.keys.abandon(scope, key);
      return;
    }
    const headers: Record<string, string> = {};
    for (const name of KEPT_HEADERS) {
      const value = answer.headers.get(name);
      if (value !== null) headers[name] = value;
    }
    await options.keys.finish(scope, key, {
      answer: { status: answer.status, headers, body: await answer.clone().text() },
      expiresAt: options.now() + IDEMPOTENCY_TTL_MS,
    });
  };
}

/**
 * The body's bytes, or null when it is larger than `max` (read no further than that). `request`
 * is a clone: the cancel that stops reading it is not awaited, as a tee's branch's cancel settles
 * only once the other branch (the route's body) is cancelled too; awaited, as leaving a
 * `for await` early does, a streamed body over `max` hung the request forever.
 */
async function boundedBody(request: Request, max: number): Promise<Uint8Array | null> {
  if (request.body === null) return new Uint8Array();
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return Buffer.concat(chunks);
    size += value.byteLength;
    if (size > max) {
      reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
}

async function fingerprintOf(method: string, path: string, body: Uint8Array): Promise<string> {
  const hasher = new Bun.CryptoHasher("sha256");
  hasher.update(`${method} ${path}\n`);
  hasher.update(body);
  return hasher.digest("hex");
}
