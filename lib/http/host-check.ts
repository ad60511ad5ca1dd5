import type { MiddlewareHandler } from "hono";
import ipaddr from "ipaddr.js";
import { ConfigError } from "../config/errors.ts";
import { escapeControl } from "../text/control.ts";

const NAME =
  /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

/**
 * The names a server answers to besides IP addresses and localhost: exact names, or
 * `.example.com` for that name and every name under it.
 */
export type AllowedHosts = readonly string[];

/** A server's names, and the variable that lists them (named in the 421 answer). */
export interface HostNames {
  allowed: AllowedHosts;
  variable?: string;
}

/**
 * Parses a list of names such as APP_ALLOWED_HOSTS (`variable`): a comma list of host names (no
 * ports), `.name` meaning the name and its subdomains. A bad entry is a one-line ConfigError
 * naming the variable.
 */
export function parseAllowedHosts(value: string | undefined, variable: string): AllowedHosts {
  if (value === undefined) return [];
  return value
    .split(",")
    .map((entry) => entry.trim().toLowerCase().replace(/\.$/, ""))
    .filter((entry) => entry !== "")
    .map((entry) => {
      const name = entry.startsWith(".") ? entry.slice(1) : entry;
      if (!NAME.test(name)) {
        throw new ConfigError(
          `${variable} entry ${escapeControl(JSON.stringify(entry))} is invalid: expected host names without ports, e.g. admin.example.com or .example.com`,
        );
      }
      return entry;
    });
}

/**
 * Whether a request for `host` (a Host header: name or address, optional port) is meant for this
 * server. IP addresses always are: a browser that sends one connected to that address itself, and
 * no other site's pages can read the answer. Names must be localhost (or under .localhost, which
 * browsers resolve to loopback without DNS) or allowed: DNS rebinding points a name the attacker
 * owns at 127.0.0.1, and that name then arrives here in Host. The same rule as Vite's
 * `server.allowedHosts`. Returns null for a Host that is not a host at all.
 */
export function isAllowedHost(host: string, allowed: AllowedHosts): boolean | null {
  const name = hostName(host);
  if (name === null) return null;
  if (name.includes(":") || ipaddr.IPv4.isValidFourPartDecimal(name)) return true;
  if (name === "localhost" || name.endsWith(".localhost")) return true;
  return allowed.some((entry) =>
    entry.startsWith(".") ? name === entry.slice(1) || name.endsWith(entry) : name === entry,
  );
}

/**
 * Refuses, before anything else runs, requests whose Host is not one of the server's names (421
 * Misdirected Request) and requests without a usable Host at all (400, e.g. HTTP/1.0).
 */
export function hostCheckMiddleware(names: HostNames): MiddlewareHandler {
  return async function hostCheck(c, next) {
    const host = c.req.header("host") ?? urlHost(c.req.url);
    const verdict = host === null ? null : isAllowedHost(host, names.allowed);
    if (verdict === null) {
      return c.text("Bad request: a valid Host header is required.\n", 400);
    }
    if (!verdict) {
      const hint = names.variable ? `: if it is yours, add it to ${names.variable}` : "";
      return c.text(
        `This server does not answer to the name ${JSON.stringify(hostName(host ?? ""))}${hint}.\n`,
        421,
      );
    }
    await next();
  };
}

/** `Example.COM.:8000` → `example.com`, `[::1]:80` → `::1`; null when it is no host. */
function hostName(host: string): string | null {
  const text = host.trim().toLowerCase();
  const bracketed = /^\[([0-9a-f:.]+)\](?::\d{1,5})?$/.exec(text);
  if (bracketed) return ipaddr.IPv6.isValid(bracketed[1] ?? "") ? (bracketed[1] ?? null) : null;
  const plain = /^([a-z0-9_.-]+?)\.?(?::\d{1,5})?$/.exec(text);
  if (!plain?.[1]) return null;
  const name = plain[1];
  return NAME.test(name) ? name : null;
}

function urlHost(url: string): string | null {
  return URL.canParse(url) ? new URL(url).host || null : null;
}
