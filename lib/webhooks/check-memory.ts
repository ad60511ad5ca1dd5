import { DNS_TTL_MS } from "../http/dns-cache.ts";
import { setNewest } from "../http/recent-map.ts";
import {
  type AllowList,
  checkDestination,
  type DestinationCheck,
  pinnedTarget,
  type Resolver,
} from "../http/ssrf.ts";

const LITERAL_HOST = /^(?:\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-f:.]+\])$/i;
/** URLs remembered at most: a templated URL can make one per delivery. */
const MAX_REMEMBERED = 1000;

/** Where a checked request goes: the checked address, with the URL's name in Host and SNI. */
export type Target = ReturnType<typeof pinnedTarget>;

export interface RememberedCheck {
  check: DestinationCheck;
  target: Target;
  /** Epoch ms after which the check is made again. */
  until: number;
}

/**
 * A worker's destination checks (the SSRF guard) per URL, with where to send: an IP literal's for
 * the worker's life (its answer cannot change), a name's for DNS_TTL_MS, as long as the worker
 * keeps its addresses. Without it a name is checked before every attempt: about 20 µs of worker
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
  options: { allow: AllowList; resolve?: Resolver; memory?: CheckMemory },
  at: number,
): Promise<RememberedCheck> {
  const check = await checkDestination(url, { allow: options.allow, resolve: options.resolve });
  const target = check.ok ? pinnedTarget(url, check.addresses) : { url };
  const until = LITERAL_HOST.test(hostOf(url)) ? Number.POSITIVE_INFINITY : at + DNS_TTL_MS;
  const entry = { check, target, until };
  if (options.memory) setNewest(options.memory, url, entry, MAX_REMEMBERED);
  return entry;
}

export function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return "";
  }
}
