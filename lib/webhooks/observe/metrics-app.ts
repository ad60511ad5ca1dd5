import { type Context, Hono } from "hono";
import { type HostNames, hostCheckMiddleware } from "../../http/host-check.ts";
import { clientKey, createLoginThrottle, type LoginThrottle } from "../../http/token-throttle.ts";
import type { Logger } from "../../log.ts";
import { safeEqual } from "../../secrets.ts";
import { errorMessage } from "../../text/error-message.ts";
import type { Metrics } from "./metrics.ts";

/** What Bun.serve passes as the env: its Server, whose requestIP gives the peer's address. */
type MetricsEnv = { Bindings: { requestIP?: (request: Request) => { address: string } | null } };

/**
 * `GET /metrics` for a worker's --metrics-port (the app mounts metricsHandler behind its own
 * authMiddleware instead). As on the app, a Host that is none of its names gets 421 first (a
 * name rebound to 127.0.0.1 cannot read it); with an admin token, a request needs
 * `Authorization: Bearer <token>`, and wrong tokens are throttled per client.
 * The worker serves it: `Bun.serve({ hostname, port, fetch: app.fetch })`.
 */
export function createMetricsApp(
  metrics: Metrics,
  options: {
    /** Names besides IP addresses and localhost; default none. */
    hostNames?: HostNames;
    adminToken?: string | null;
    logger?: Pick<Logger, "warn">;
    throttle?: LoginThrottle;
    now?: () => number;
  } = {},
): Hono<MetricsEnv> {
  const { adminToken } = options;
  const app = new Hono<MetricsEnv>();
  app.use(hostCheckMiddleware(options.hostNames ?? { allowed: [] }));
  if (adminToken) {
    const throttle = options.throttle ?? createLoginThrottle();
    const now = options.now ?? Date.now;
    app.use("/metrics", async (c, next) => {
      const client = clientKey(c.env?.requestIP?.(c.req.raw)?.address);
      const match = c.req.header("authorization")?.match(/^Bearer\s+(\S+)\s*$/i);
      const wait = throttle.waitMs(client, now(), match?.[1]);
      if (wait > 0) {
        const seconds = Math.ceil(wait / 1000);
        c.header("Retry-After", String(seconds));
        return c.text(`Too many wrong tokens from this address: try again in ${seconds} s\n`, 429);
      }
      if (match?.[1] !== undefined && safeEqual(match[1], adminToken)) {
        throttle.succeeded(match[1], now());
        return next();
      }
      if (match?.[1] !== undefined) {
        const { failures, lockedMs } = throttle.failed(client, now());
        const lock =
          lockedMs > 0 ? `; further tries refused for ${Math.ceil(lockedMs / 1000)} s` : "";
        options.logger?.warn(
          `Wrong admin bearer token on the metrics port from ${client} (${failures} in a row${lock})`,
        );
      }
      c.header("WWW-Authenticate", 'Bearer realm="metrics"');
      return c.text("Authentication required: send Authorization: Bearer <ADMIN_TOKEN>\n", 401);
    });
  }
  app.get("/metrics", metricsHandler(metrics, options.logger));
  return app;
}

/** The handler alone, for the app to mount at /metrics behind its ADMIN_TOKEN middleware. */
export function metricsHandler(
  metrics: Metrics,
  logger?: Pick<Logger, "warn">,
): (c: Context) => Promise<Response> {
  return async (c) => {
    try {
      return c.body(await metrics.render(), 200, { "content-type": metrics.contentType });
    } catch (error) {
      logger?.warn(`Metrics unavailable: ${errorMessage(error)}`);
      return c.body("Metrics unavailable\n", 503, { "content-type": "text/plain; charset=utf-8" });
    }
  };
}
