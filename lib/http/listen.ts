import ipaddr from "ipaddr.js";
import { ConfigError } from "../config/errors.ts";

export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  if (bare === "localhost") return true;
  if (!ipaddr.isValid(bare)) return false;
  return ipaddr.process(bare).range() === "loopback";
}

/** The address in start messages: `http://127.0.0.1:9000`, `http://[::1]:9000`. */
export function listenUrl(host: string, port: number): string {
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/**
 * Bun.serve with start-up failures as one ConfigError line naming the flag and the address
 * (a taken port, an address this machine does not have), instead of a stack trace.
 */
export function serveOn(
  options: { host: string; port: number; flag: string; hostFlag?: string },
  fetch: (request: Request, server: Bun.Server<undefined>) => Response | Promise<Response>,
): Bun.Server<undefined> {
  try {
    return Bun.serve({ hostname: options.host, port: options.port, fetch });
  } catch (error) {
    const code = (error as { code?: string }).code;
    const where = listenUrl(options.host, options.port);
    if (code === "EADDRINUSE") {
      throw new ConfigError(
        `${options.flag}=${options.port} is in use on ${options.host} (${where}): stop what listens there or pick another port`,
      );
    }
    if (code === "EADDRNOTAVAIL") {
      throw new ConfigError(
        `${options.hostFlag ?? "--host"}=${options.host} is not an address of this machine: cannot listen on ${where}`,
      );
    }
    if (code === "EINVAL" || code === "ENOENT") {
      throw new ConfigError(
        `${options.hostFlag ?? "--host"}=${options.host} is not an address this machine can listen on: cannot listen on ${where}`,
      );
    }
    if (code === "EACCES") {
      throw new ConfigError(
        `${options.flag}=${options.port} needs privileges on ${options.host} (${where}): pick a port above 1023`,
      );
    }
    throw error;
  }
}
