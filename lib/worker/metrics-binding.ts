import { ConfigError } from "../config/errors.ts";
import { isLoopbackHost } from "../http/listen.ts";

/**
 * The ADMIN_TOKEN rule for a metrics listener, as for the app: loopback is open, any other
 * address needs the token. Throws a one-line ConfigError naming the flag otherwise. (Apart from
 * metrics-app.ts so that checking a worker's flags does not load the HTTP stack.)
 */
export function assertMetricsBinding(
  host: string,
  adminToken: string | null | undefined,
  flag = "--metrics-host",
): void {
  if (adminToken || isLoopbackHost(host)) return;
  throw new ConfigError(
    `${flag}=${host} is not a loopback address, so ADMIN_TOKEN is required to protect /metrics: set ADMIN_TOKEN or listen on 127.0.0.1`,
  );
}
