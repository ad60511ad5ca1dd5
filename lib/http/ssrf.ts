import { lookup } from "node:dns/promises";
import { networkInterfaces } from "node:os";
import { domainToASCII } from "node:url";
import ipaddr from "ipaddr.js";
import { ConfigError } from "../config/errors.ts";
import { escapeControl } from "../text/control.ts";
import { errorMessage } from "../text/error-message.ts";

/**
 * The SSRF guard: before each attempt the worker resolves the webhook's host and refuses any
 * address that is not global unicast (loopback, private, link-local and cloud metadata, CGNAT,
 * multicast, reserved, …) and the machine's own addresses (a service bound to 0.0.0.0 answers
 * on the host's public address too) unless WEBHOOK_ALLOWED_HOSTS allows it. Ranges come from
 * ipaddr.js.
 */

/** The variable named in messages unless the caller names its own (the digest: DIGEST_ALLOWED_HOSTS). */
const DEFAULT_VARIABLE = "WEBHOOK_ALLOWED_HOSTS";
const EXPECTED = "expected a host, host:port or CIDR, e.g. localhost:9000 or 10.0.0.0/8";

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * One WEBHOOK_ALLOWED_HOSTS entry. `host` entries match the URL's host name (case-insensitive);
 * `address` entries (an IP, IP:port or CIDR) match the resolved addresses. A null port matches
 * any port.
 */
export type AllowEntry =
  | { kind: "host"; host: string; port: number | null }
  | { kind: "address"; range: [Address, number]; port: number | null };

export type AllowList = readonly AllowEntry[];

export type Resolver = (host: string) => Promise<string[]>;

/** os.networkInterfaces(): where this machine's own addresses come from; tests pass a list. */
export type InterfaceSource = () => ReturnType<typeof networkInterfaces>;

export type DestinationCheck =
  | { ok: true; addresses: string[] }
  | {
      ok: false;
      reason: string;
      /**
       * For an address refused by its range or as this machine's own: what was refused, why,
       * and the allow-list entry that would let it through (absent for a bad URL or scheme, or a
       * name that did not resolve).
       */
      refused?: { what: string; label: string; allowWith: string };
    };

/**
 * Parses WEBHOOK_ALLOWED_HOSTS: a comma list of `host`, `host:port`, `[ipv6]:port`, an IP
 * (same as /32 or /128) or a CIDR. IPv4 must be in plain dotted decimal here. Throws a one-line
 * ConfigError naming the variable for a bad entry.
 */
export function parseAllowList(value: string | undefined, variable = DEFAULT_VARIABLE): AllowList {
  if (value === undefined) return [];
  return value
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "")
    .map((entry) => {
      const parsed = parseEntry(entry);
      if (parsed === null) {
        throw new ConfigError(
          `${variable} entry ${escapeControl(JSON.stringify(entry))} is invalid: ${EXPECTED}`,
        );
      }
      return parsed;
    });
}

/**
 * Decides whether a delivery may go to `url`: only http(s), and every address the host resolves
 * to must be global unicast or allowed (one bad answer among several refuses, against DNS
 * rebinding). IP literals are not resolved. Returns the checked addresses so a caller can
 * connect to exactly those.
 */
export async function checkDestination(
  url: string | URL,
  options: {
    allow: AllowList;
    resolve?: Resolver;
    interfaces?: InterfaceSource;
    /** The allow-list's variable, named in refusals. */
    variable?: string;
  },
): Promise<DestinationCheck> {
  let parsed: URL;
  try {
    parsed = typeof url === "string" ? new URL(url) : url;
  } catch {
    return { ok: false, reason: "invalid URL: expected an http:// or https:// URL" };
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    return {
      ok: false,
      reason: `refused ${escapeControl(parsed.protocol)} URL: only http and https are allowed`,
    };
  }
  const port = parsed.port === "" ? (parsed.protocol === "https:" ? 443 : 80) : Number(parsed.port);
  const host = parsed.hostname.toLowerCase().replace(/\.+$/, "");
  if (host === "") return { ok: false, reason: "invalid URL: it has no host" };

  const literal = hostLiteral(host);
  let answers: string[];
  if (literal !== null) {
    answers = [literal.toString()];
  } else {
    try {
      answers = await (options.resolve ?? resolveAll)(host);
    } catch (error) {
      return { ok: false, reason: `could not resolve ${host}: ${oneLine(error)}` };
    }
    if (answers.length === 0) {
      return { ok: false, reason: `could not resolve ${host}: no addresses` };
    }
  }

  const addresses: string[] = [];
  // Read per check (about 20 µs, only once an address passed the range check): interfaces and
  // their addresses come and go while a worker runs.
  let own: Set<string> | undefined;
  for (const answer of answers) {
    if (!ipaddr.isValid(answer)) {
      return {
        ok: false,
        reason: `could not resolve ${host}: the resolver returned ${escapeControl(JSON.stringify(answer))}, not an address`,
      };
    }
    const address = ipaddr.parse(answer);
    let label = forbiddenLabel(address);
    if (label === null) {
      own ??= ownAddresses(options.interfaces ?? networkInterfaces);
      if (isOwnAddress(address, own)) label = "this machine's own address";
    }
    if (label !== null && !isAllowed(options.allow, host, port, address)) {
      const suggestion = `${literal === null ? host : hostForUrl(address)}:${port}`;
      const what = literal === null ? `${host}, which resolves to ${address}` : `${address}`;
      return {
        ok: false,
        reason: `refused ${what} (${label}): set ${options.variable ?? DEFAULT_VARIABLE}=${suggestion} to allow it`,
        refused: { what, label, allowWith: suggestion },
      };
    }
    addresses.push(address.toString());
  }
  return { ok: true, addresses };
}

/** Why an address may not be a webhook target, or null when it is global unicast. */
function forbiddenLabel(address: Address): string | null {
  if (address.kind() === "ipv4") {
    const range = address.range();
    return range === "unicast" ? null : range;
  }
  const v6 = address as ipaddr.IPv6;
  const range = v6.range();
  const embedding = embeddedIPv4(v6, range);
  if (embedding !== null) {
    for (const inner of embedding.addresses) {
      const innerLabel = forbiddenLabel(inner);
      if (innerLabel !== null) return `${innerLabel} ${inner} embedded in ${embedding.form}`;
    }
    return embedding.alwaysForbidden ? `${embedding.form}, deprecated` : null;
  }
  if (range !== "unicast") return range;
  // ipaddr.js calls everything outside its special ranges "unicast", but only 2000::/3 is
  // allocated as global unicast; the rest of the space is reserved by IANA.
  return (v6.parts[0] ?? 0) >> 13 === 1 ? null : "reserved";
}

/**
 * IPv6 forms that carry an IPv4 address the packets may end up at: each embedded address is
 * checked like a plain IPv4 one.
 */
function embeddedIPv4(
  address: ipaddr.IPv6,
  range: string,
): { form: string; addresses: ipaddr.IPv4[]; alwaysForbidden: boolean } | null {
  const p = address.parts;
  const v4 = (high: number, low: number) =>
    new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
  const last32 = () => v4(p[6] ?? 0, p[7] ?? 0);
  switch (range) {
    case "ipv4Mapped":
      return { form: "IPv4-mapped IPv6", addresses: [last32()], alwaysForbidden: false };
    case "rfc6145":
      return { form: "IPv4-translated IPv6", addresses: [last32()], alwaysForbidden: false };
    case "rfc6052":
      // Only the well-known NAT64 prefix 64:ff9b::/96 puts the IPv4 in the last 32 bits; the
      // local-use 64:ff9b:1::/48 is not globally reachable and falls through to "rfc6052".
      if (p[1] === 0xff9b && p[2] === 0 && p[3] === 0 && p[4] === 0 && p[5] === 0) {
        return { form: "NAT64 IPv6", addresses: [last32()], alwaysForbidden: false };
      }
      return null;
    case "6to4":
      return { form: "6to4 IPv6", addresses: [v4(p[1] ?? 0, p[2] ?? 0)], alwaysForbidden: false };
    case "teredo":
      // Server address in bits 32–63, client address (bit-inverted) in the last 32 bits.
      return {
        form: "Teredo IPv6",
        addresses: [v4(p[2] ?? 0, p[3] ?? 0), v4(~(p[6] ?? 0) & 0xffff, ~(p[7] ?? 0) & 0xffff)],
        alwaysForbidden: false,
      };
    case "unicast":
      // IPv4-compatible ::a.b.c.d (RFC 4291, deprecated): never a target, but say what it hides.
      if (p.slice(0, 6).every((part) => part === 0)) {
        return { form: "IPv4-compatible IPv6", addresses: [last32()], alwaysForbidden: true };
      }
      return null;
    default:
      return null;
  }
}

/** The machine's interface addresses, normalised (IPv4 plain, IPv6 in ipaddr.js's form). */
function ownAddresses(interfaces: InterfaceSource): Set<string> {
  const own = new Set<string>();
  for (const list of Object.values(interfaces())) {
    for (const info of list ?? []) {
      const bare = info.address.replace(/%.*$/, "");
      if (ipaddr.isValid(bare)) own.add(ipaddr.parse(bare).toString());
    }
  }
  return own;
}

/** The address itself, or an IPv4 address it carries (mapped, NAT64, 6to4, …), is one of ours. */
function isOwnAddress(address: Address, own: Set<string>): boolean {
  if (own.has(address.toString())) return true;
  if (address.kind() === "ipv4") return false;
  const v6 = address as ipaddr.IPv6;
  const embedding = embeddedIPv4(v6, v6.range());
  return embedding?.addresses.some((inner) => own.has(inner.toString())) ?? false;
}

function isAllowed(allow: AllowList, host: string, port: number, address: Address): boolean {
  const candidates: Address[] = [address];
  if (address.kind() === "ipv6" && (address as ipaddr.IPv6).isIPv4MappedAddress()) {
    candidates.push((address as ipaddr.IPv6).toIPv4Address());
  }
  return allow.some((entry) => {
    if (entry.port !== null && entry.port !== port) return false;
    if (entry.kind === "host") return entry.host === host;
    const [network, bits] = entry.range;
    return candidates.some(
      (candidate) => candidate.kind() === network.kind() && candidate.match(network, bits),
    );
  });
}

/** An IP literal URL host ("[::1]", "127.0.0.1", or any IPv4 notation ipaddr.js reads), or null. */
function hostLiteral(host: string): Address | null {
  if (host.startsWith("[") && host.endsWith("]")) {
    const inner = host.slice(1, -1);
    return ipaddr.IPv6.isValid(inner) ? ipaddr.IPv6.parse(inner) : null;
  }
  // WHATWG URL parsing already turns 2130706433, 0x7f.1 and 0177.0.0.1 into 127.0.0.1; this
  // catches them anyway should a host ever arrive here unnormalised.
  return ipaddr.IPv4.isValid(host) ? ipaddr.IPv4.parse(host) : null;
}

function hostForUrl(address: Address): string {
  return address.kind() === "ipv6" ? `[${address}]` : address.toString();
}

/** The system's resolver (getaddrinfo: /etc/hosts, then DNS), every address of the host. */
export async function resolveAll(host: string): Promise<string[]> {
  const results = await lookup(host, { all: true });
  return results.map((result) => result.address);
}

function parseEntry(text: string): AllowEntry | null {
  if (text.includes("/")) {
    const valid =
      ipaddr.IPv4.isValidCIDRFourPartDecimal(text) ||
      (text.includes(":") && !text.includes("%") && ipaddr.IPv6.isValidCIDR(text));
    return valid ? { kind: "address", range: ipaddr.parseCIDR(text), port: null } : null;
  }
  const address = entryAddress(text, true);
  if (address !== null) return { kind: "address", range: fullRange(address), port: null };

  const withPort = /^(.+):(\d{1,5})$/.exec(text);
  if (withPort === null) {
    const host = entryHostname(text);
    return host === null ? null : { kind: "host", host, port: null };
  }
  const port = Number(withPort[2]);
  const hostPart = withPort[1] ?? "";
  if (port < 1 || port > 65535) return null;
  const portAddress = entryAddress(hostPart, false);
  if (portAddress !== null) return { kind: "address", range: fullRange(portAddress), port };
  const host = entryHostname(hostPart);
  return host === null ? null : { kind: "host", host, port };
}

/** Dotted-decimal IPv4 or bracketed IPv6; a bare IPv6 only where no port can follow. */
function entryAddress(text: string, bareIPv6: boolean): Address | null {
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return ipaddr.IPv4.parse(text);
  const bracketed = text.startsWith("[") && text.endsWith("]");
  const inner = bracketed ? text.slice(1, -1) : text;
  if ((bracketed || bareIPv6) && inner.includes(":") && !inner.includes("%")) {
    return ipaddr.IPv6.isValid(inner) ? ipaddr.IPv6.parse(inner) : null;
  }
  return null;
}

/** A host name as a URL would hold it (lowercase, punycode, no trailing dot), or null. */
function entryHostname(text: string): string | null {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: any non-ASCII means an IDN.
  const ascii = /[^\u0000-\u007f]/.test(text) ? domainToASCII(text) : text.toLowerCase();
  const host = ascii.replace(/\.$/, "");
  const label = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;
  const labels = host.split(".");
  const last = labels.at(-1) ?? "";
  // A name whose last label is a number would be read as an IPv4 address by URL parsing.
  if (host.length > 253 || /^(?:\d+|0x[0-9a-f]*)$/.test(last)) return null;
  return labels.every((part) => label.test(part)) ? host : null;
}

function fullRange(address: Address): [Address, number] {
  return [address, address.kind() === "ipv4" ? 32 : 128];
}

function oneLine(error: unknown): string {
  const message = errorMessage(error);
  return escapeControl(message.replace(/\s+/g, " ").trim());
}

/**
 * The URL with its host name replaced by the address the check approved, and the original host
 * for the Host header: fetch then connects where the check looked, so a DNS answer that changes
 * in between (rebinding) cannot send the request elsewhere. Over https the TLS server name stays
 * the URL's host, so SNI and the certificate check are made against the name (Bun verifies the
 * certificate against tls.serverName). No `host` when the URL already names the address.
 */
export function pinnedTarget(
  url: string,
  addresses: readonly string[],
): { url: string; host?: string; tls?: { serverName: string } } {
  const address = addresses[0];
  if (address === undefined) return { url };
  const parsed = new URL(url);
  const literal = address.includes(":") ? `[${address}]` : address;
  if (parsed.hostname === literal) return { url };
  const name = parsed.hostname;
  const host = parsed.host;
  parsed.hostname = literal;
  return parsed.protocol === "https:"
    ? { url: parsed.href, host, tls: { serverName: name } }
    : { url: parsed.href, host };
}
