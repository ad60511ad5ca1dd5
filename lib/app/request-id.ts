import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./context.ts";

/**
 * Gives every request a fresh UUID (never the client's `X-Request-Id`, which anyone could
 * forge into a webhook payload) and returns it as `X-Request-Id`.
 */
export function requestIdMiddleware(
  randomUUID: () => string = () => crypto.randomUUID(),
): MiddlewareHandler<AppEnv> {
  return async function requestId(c, next) {
    const id = randomUUID();
    c.set("requestId", id);
    c.header("X-Request-Id", id);
    await next();
  };
}
