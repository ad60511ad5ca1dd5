import { domainToASCII } from "node:url";
import ipaddr from "ipaddr.js";
import { type Env, withoutEmpty } from "../config/env.ts";
import { ConfigError } from "../config/errors.ts";
import { escapeControl } from "../text/control.ts";
import { MASKED_PASSWORD, maskUrlPassword } from "../text/url-credentials.ts";

/**
 * An outbound proxy named in the configuration (WEBHOOK_PROXY_URL, DIGEST_PROXY_URL) and the
 * hosts reached without it (WEBHOOK_NO_PROXY, DIGEST_NO_PROXY). The environment's own proxy
 * variables (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY), which Bun's fetch reads by itself on
 * every request, are never used: a process that sends removes them from its environment at
 * start (withoutEnvironmentProxies), so which requests leave through a proxy is decided here
 * alone, and said in the docs.
 */

export interface ProxySetting {
  /** The proxy's URL as fetch takes it, credentials included: never logged or shown. */
  url: string;
  /** The URL with its password masked (`http://user:***@proxy:3128`), for logs and messages. */
  shown: string;
  /** Destinations reached directly (loopback always is). */
  noProxy: readonly NoProxyEntry[];
}

export type NoProxyEntry =
  | { kind: "all" }
  /** A host name and every name under it (`example.com`, `.example.com`, `*.example.com`). */
  | { kind: "domain"; domain: string }
  | { kind: "address"; range: [ipaddr.IPv4 | ipaddr.IPv6, number] };

/** The variables Bun's fetch reads by itself, in both cases. */
export const ENVIRONMENT_PROXY_VARIABLES: readonly string[] = [
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "ALL_PROXY",
  "NO_PROXY",
].flatMap((name) => [name, name.toLowerCase()]);

/**
 * Removes the environment's proxy variables from `env` (the process's own environment, given
 * by its entry), so Bun's fetch cannot route a request through a proxy nobody configured here,
 * nor past the configured one by an inherited NO_PROXY. Returns the names removed (never their
 * values, which may hold credentials), for the start line.
 */
export function withoutEnvironmentProxies(env: Env): string[] {
  const removed: string[] = [];
  for (const name of ENVIRONMENT_PROXY_VARIABLES) {
    if (env[name] !== undefined) {
      delete env[name];
      removed.push(name);
    }
  }
  return removed;
}

/**
 * The proxy `urlVariable` names and the `noProxyVariable` list, or null when no proxy is set.
 * A proxy URL is `http://` or `https://` with a host, an optional port and optional
 * `user:password@` (percent-encoded), nothing after. A bad value is a one-line ConfigError
 * that never repeats a password.
 */
export function loadProxySetting(
  env: Env,
  variables: { url: string; noProxy: string },
): ProxySetting | null {
  const values = withoutEmpty(env);
  const value = values[variables.url];
  const noProxy = parseNoProxy(values[variables.noProxy], variables.noProxy);
  if (value === undefined) return null;
  const shown = escapeControl(maskedValue(value));
  const invalid = (why: string) =>
    new ConfigError(`${variables.url}=${JSON.stringify(shown)} is invalid: ${why}`);
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw invalid(
      "expected a URL such as http://proxy.example:3128 or http://user:password@proxy.example:3128",
    );
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw invalid("expected an http:// or https:// proxy");
  }
  if (parsed.hostname === "") throw invalid("it has no host");
  if ((parsed.pathname !== "/" && parsed.pathname !== "") || parsed.search || parsed.hash) {
    throw invalid("expected no path, query or fragment after the host and port");
  }
  return { url: value, shown: maskUrlPassword(parsed.href).replace(/\/$/, ""), noProxy };
}

/**
 * A proxy value as a message shows it: its password masked, also when it is no URL (written
 * without its scheme, `user:password@proxy:3128`, as curl takes it), where maskUrlPassword
 * finds none. Everything up to the last `@` is the password then: an invalid value is read
 * warily.
 */
function maskedValue(value: string): string {
  const masked = maskUrlPassword(value);
  if (masked !== value) return masked;
  return value.replace(
    /^((?:[^/?#\\@]*\/\/)?)([^/?#\\:@]*):(.*)@/,
    (_, start: string, user: string, password: string) =>
      `${start}${user}:${password === "" ? "" : MASKED_PASSWORD}@`,
  );
}

/**
 * WEBHOOK_NO_PROXY's form: a comma list of `*` (no proxy at all), host names (each matching
 * itself and every name under it; a leading `.` or `*.` is the same) and IP addresses or CIDR
 * ranges (matching a URL's IP literal, or an address the name was checked to have).
 */
export function parseNoProxy(value: string | undefined, variable: string): NoProxyEntry[] {
  if (value === undefined) return [];
  return value
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "")
    .map((entry) => {
      const parsed = noProxyEntry(entry);
      if (parsed === null) {
        throw new ConfigError(
          `${variable} entry ${escapeControl(JSON.stringify(entry))} is invalid: expected *, a host name such as .example.com, an IP address or a CIDR range such as 10.0.0.0/8`,
        );
      }
      return parsed;
    });
}

function noProxyEntry(text: string): NoProxyEntry | null {
  if (text === "*") return { kind: "all" };
  if (text.includes("/")) {
    try {
      return { kind: "address", range: ipaddr.parseCIDR(text) };
    } catch {
      return null;
    }
  }
  const bare = text.replace(/^\[(.*)\]$/, "$1");
  if (ipaddr.isValid(bare) && (bare.includes(":") || ipaddr.IPv4.isValidFourPartDecimal(bare))) {
    const address = ipaddr.parse(bare);
    return { kind: "address", range: [address, address.kind() === "ipv4" ? 32 : 128] };
  }
  const name = text.replace(/^\*?\./, "").replace(/\.$/, "");
  // biome-ignore lint/suspicious/noControlCharactersInRegex: any non-ASCII means an IDN.
  const ascii = /[^\u0000-\u007f]/.test(name) ? domainToASCII(name) : name.toLowerCase();
  const label = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;
  if (ascii === "" || ascii.length > 253 || !ascii.split(".").every((part) => label.test(part))) {
    return null;
  }
  return { kind: "domain", domain: ascii };
}

/**
 * The proxy a request to `url` goes through, or null to go directly: no proxy set, the
 * destination loopback (a proxy's own loopback is not this machine's, as Go's net/http), or
 * matched by the no-proxy list, by name or by the addresses the SSRF guard checked it to have.
 */
export function proxyFor(
  setting: ProxySetting | null | undefined,
  url: string | URL,
  addresses: readonly string[] = [],
): ProxySetting | null {
  if (!setting) return null;
  let host: string;
  try {
    host = (typeof url === "string" ? new URL(url) : url).hostname
      .toLowerCase()
      .replace(/^\[|\]$/g, "")
      .replace(/\.$/, "");
  } catch {
    return null;
  }
  const literal = ipaddr.isValid(host) ? ipaddr.parse(host) : null;
  const candidates = [
    ...(literal ? [literal] : []),
    ...addresses.filter((a) => ipaddr.isValid(a)).map((a) => ipaddr.parse(a)),
  ].map((address) =>
    address.kind() === "ipv6" && (address as ipaddr.IPv6).isIPv4MappedAddress()
      ? (address as ipaddr.IPv6).toIPv4Address()
      : address,
  );
  if (host === "localhost" || host.endsWith(".localhost")) return null;
  if (literal && candidates.some((address) => address.range() === "loopback")) return null;
  for (const entry of setting.noProxy) {
    if (entry.kind === "all") return null;
    if (entry.kind === "domain") {
      if (host === entry.domain || host.endsWith(`.${entry.domain}`)) return null;
      continue;
    }
    const [network, bits] = entry.range;
    if (candidates.some((a) => a.kind() === network.kind() && a.match(network, bits))) return null;
  }
  return setting;
}

/**
 * `fetch` with the proxy `setting` chooses for each request's URL (the digest's requests: the
 * sources, articles and the model server). A request the SSRF guard pinned (an IP URL with a
 * `host` header naming the host, ssrf.ts pinnedTarget) goes to the proxy by that name, as the
 * worker's do: the guard has accepted the name's addresses, and the proxy resolves it. Without
 * a setting, `fetch` itself.
 */
export function fetchThroughProxy(
  fetchFn: typeof fetch,
  setting: ProxySetting | null | undefined,
): typeof fetch {
  if (!setting) return fetchFn;
  const proxied = (input: string | URL | Request, init?: RequestInit) => {
    const url = input instanceof Request ? input.url : String(input);
    const named = pinnedName(url, init?.headers);
    const proxy = proxyFor(setting, named?.url ?? url, named ? [named.address] : []);
    if (proxy === null) return fetchFn(input, init);
    if (named === null) return fetchFn(input, { ...init, proxy: proxy.url } as RequestInit);
    return fetchFn(named.url, { ...init, headers: named.headers, proxy: proxy.url } as RequestInit);
  };
  return Object.assign(proxied, { preconnect: fetchFn.preconnect }) as typeof fetch;
}

/** A pinned request's URL by name, its address and its headers without `host`; or null. */
function pinnedName(
  url: string,
  headers: RequestInit["headers"],
): { url: string; address: string; headers: Headers } | null {
  if (headers === undefined) return null;
  const all = new Headers(headers);
  const host = all.get("host");
  if (host === null) return null;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  const address = parsed.hostname.replace(/^\[|\]$/g, "");
  if (!ipaddr.isValid(address)) return null;
  parsed.host = host;
  all.delete("host");
  return { url: parsed.href, address, headers: all };
}
