import { setNewest } from "./recent-map.ts";
import type { Resolver } from "./ssrf.ts";

/** How long a host's addresses are reused: as long as Bun's own DNS cache for fetch keeps them. */
export const DNS_TTL_MS = 30_000;
/** Hosts remembered at most; the oldest answer is forgotten first. */
export const DNS_MAX_HOSTS = 256;

/**
 * A resolver that remembers each host's addresses for `ttlMs`. The worker checks a webhook's
 * destination (the SSRF check, then a connection to the checked address) once per URL and 30 s
 * (lib/webhooks/sending/check-memory.ts); a templated URL makes a new URL per delivery, and without this
 * each would cost a lookup: a round trip to the DNS server, or about 85 µs from /etc/hosts here.
 * The request still goes to the address that was checked, which keeps DNS rebinding out. Failures
 * and empty answers are not remembered: the next attempt asks again. Lookups under way are not
 * shared, so one that hangs holds up only the attempts that made it (each has its timeout).
 */
export function createCachedResolver(
  resolve: Resolver,
  options: { now?: () => number; ttlMs?: number; maxHosts?: number } = {},
): Resolver {
  const now = options.now ?? Date.now;
  const ttlMs = options.ttlMs ?? DNS_TTL_MS;
  const maxHosts = options.maxHosts ?? DNS_MAX_HOSTS;
  const answers = new Map<string, { addresses: string[]; until: number }>();
  return async (host) => {
    const known = answers.get(host);
    if (known && known.until > now()) return known.addresses;
    const addresses = await resolve(host);
    if (addresses.length > 0)
      setNewest(answers, host, { addresses, until: now() + ttlMs }, maxHosts);
    else answers.delete(host);
    return addresses;
  };
}
