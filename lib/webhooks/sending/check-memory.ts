import { DNS_TTL_MS } from "../../http/dns-cache.ts";
import { type ProxySetting, proxyFor } from "../../http/proxy.ts";
import { setNewest } from "../../http/recent-map.ts";
import {
  type AllowList,
  checkDestination,
  type DestinationCheck,
  type InterfaceSource,
  pinnedTarget,
  type Resolver,
} from "../../http/ssrf.ts";

/** URLs remembered at most: a templated URL can make one per delivery. */
const MAX_REMEMBERED = 1000;

/**
 * Where a checked request goes: the checked address, with the URL's name in Host and SNI; or,
 * through a proxy (`proxy`), the URL as it is, for the proxy to resolve.
 */
export type Target = ReturnType<typeof pinnedTarget> & { proxy?: ProxySetting };

export interface RememberedCheck {
  check: DestinationCheck;
  target: Target;
  /** Epoch ms after which the check is made again. */
  until: number;
}

/**
 * A worker's destination checks (the SSRF guard) per URL, with where to send, for DNS_TTL_MS: a
 * name's as long as the worker keeps its addresses, an IP literal's as long too, because the
 * verdict depends on the machine's own addresses as well, and those change (an interface added
 * makes a public literal this machine's own). Without it a name is checked before every attempt: about 20 µs of worker
 * CPU per delivery (bench:webhooks `throughput`, by host name). At most MAX_REMEMBERED URLs, the
 * oldest forgotten first. One per worker, for the same `allow`.
 */
export type CheckMemory = Map<string, RememberedCheck>;

/** The check of `url` made before and still good at `at`, if any. */
export function rememberedCheck(
  memory: CheckMemory | undefined,
  url: string,
  at: number,
): RememberedCheck | undefined {
  const known = memory?.get(url);
  return known !== undefined && known.until > at ? known : undefined;
}

/** Checks `url` (resolving its host) and remembers the outcome in `memory`. */
export async function checkAndRemember(
  url: string,
  options: {
    allow: AllowList;
    resolve?: Resolver;
    /** This machine's own addresses; default os.networkInterfaces(). */
    interfaces?: InterfaceSource;
    memory?: CheckMemory;
    /** WEBHOOK_PROXY_URL and WEBHOOK_NO_PROXY; absent: every request goes directly. */
    proxy?: ProxySetting | null;
  },
  at: number,
): Promise<RememberedCheck> {
  const { allow, resolve, interfaces } = options;
  const check = await checkDestination(url, { allow, resolve, interfaces });
  const target = check.ok ? targetOf(url, check.addresses, options.proxy) : { url };
  const entry = { check, target, until: at + DNS_TTL_MS };
  if (options.memory) setNewest(options.memory, url, entry, MAX_REMEMBERED);
  return entry;
}

/**
 * A checked URL's target. Through a proxy the request names the host, not the checked address
 * (a proxy connects where it resolves the name; the residual is in docs/security.md); only a
 * URL the guard accepted gets here, so a refused destination never reaches the proxy.
 */
function targetOf(
  url: string,
  addresses: string[],
  proxy: ProxySetting | null | undefined,
): Target {
  const via = proxyFor(proxy, url, addresses);
  return via ? { url, proxy: via } : pinnedTarget(url, addresses);
}

export function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return "";
  }
}
