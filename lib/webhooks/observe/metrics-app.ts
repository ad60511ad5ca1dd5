import { type Context, Hono } from "hono";
import type { Logger } from "../../log.ts";
import { safeEqual } from "../../secrets.ts";
import type { Metrics } from "./metrics.ts";

/**
 * `GET /metrics` for a worker's --metrics-port (the app mounts metricsHandler behind its own
 * authMiddleware instead). With an admin token, a request needs `Authorization: Bearer <token>`,
 * as the app's API does. The script serves it: `Bun.serve({ hostname, port, fetch: app.fetch })`.
 */
export function createMetricsApp(
  metrics: Metrics,
  options: { adminToken?: string | null; logger?: Pick<Logger, "warn"> } = {},
): Hono {
  const { adminToken } = options;
  const app = new Hono();
  if (adminToken) {
    app.use("/metrics", async (c, next) => {
      const match = c.req.header("authorization")?.match(/^Bearer\s+(\S+)\s*$/i);
      if (match?.[1] !== undefined && safeEqual(match[1], adminToken)) return next();
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
      logger?.warn(
        `Metrics unavailable: ${error instanceof Error ? error.message : String(error)}`,
      );
      return c.body("Metrics unavailable\n", 503, { "content-type": "text/plain; charset=utf-8" });
    }
  };
}
