import type { Resolver } from "./ssrf.ts";

/** How long a host's addresses are reused: as long as Bun's own DNS cache for fetch keeps them. */
export const DNS_TTL_MS = 30_000;
/** Hosts remembered at most; the oldest answer is forgotten first. */
export const DNS_MAX_HOSTS = 256;

/**
 * A resolver that remembers each host's addresses for `ttlMs`. The worker checks a webhook's
 * destination (the SSRF check, then a connection to the checked address) once per URL and 30 s
 * (lib/webhooks/check-memory.ts); a templated URL makes a new URL per delivery, and without this
 * each would cost a lookup: a round trip to the DNS server, or about 85 µs from /etc/hosts here. The addresses are still checked on every attempt, and
 * connecting to an address checked a moment ago is what keeps DNS rebinding out anyway. Failures
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
    answers.delete(host);
    if (addresses.length > 0) {
      // Map keeps insertion order: the first key is the oldest answer.
      const oldest = answers.keys().next();
      if (answers.size >= maxHosts && !oldest.done) answers.delete(oldest.value);
      answers.set(host, { addresses, until: now() + ttlMs });
    }
    return addresses;
  };
}
