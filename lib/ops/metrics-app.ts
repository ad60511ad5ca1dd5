import { type Context, Hono } from "hono";
import { bearerAuth } from "hono/bearer-auth";
import ipaddr from "ipaddr.js";
import { ConfigError } from "../config/errors.ts";
import type { Logger } from "../log.ts";
import type { Metrics } from "./metrics.ts";

/**
 * `GET /metrics` for a worker's --metrics-port (the app mounts the same handler behind its own
 * admin authentication). With an admin token, a request needs `Authorization: Bearer <token>`.
 * The script serves it: `Bun.serve({ hostname, port, fetch: app.fetch })`.
 */
export function createMetricsApp(
  metrics: Metrics,
  options: { adminToken?: string | null; logger?: Pick<Logger, "warn"> } = {},
): Hono {
  const app = new Hono();
  if (options.adminToken) app.use("/metrics", bearerAuth({ token: options.adminToken }));
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

/** True for names and addresses that only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  if (bare === "localhost" || bare.endsWith(".localhost")) return true;
  if (!ipaddr.isValid(bare)) return false;
  let address = ipaddr.parse(bare);
  if (address.kind() === "ipv6" && (address as ipaddr.IPv6).isIPv4MappedAddress()) {
    address = (address as ipaddr.IPv6).toIPv4Address();
  }
  return address.range() === "loopback";
}

/**
 * The ADMIN_TOKEN rule for a metrics listener: loopback is open, any other address needs a
 * token. Throws a one-line ConfigError naming the flag otherwise.
 */
export function assertMetricsBinding(
  host: string,
  adminToken: string | null | undefined,
  flag = "--metrics-host",
): void {
  if (adminToken || isLoopbackHost(host)) return;
  throw new ConfigError(
    `${flag} ${host} is not a loopback address: set ADMIN_TOKEN to protect /metrics, or bind 127.0.0.1`,
  );
}
