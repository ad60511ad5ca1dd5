import { createHash } from "node:crypto";
import ipaddr from "ipaddr.js";
import { setNewest } from "./recent-map.ts";

/**
 * Per-client backoff for wrong tokens (login form and bearer header alike): the first few
 * failures are free (typos), then each one locks the client out for twice as long as the one
 * before, up to a cap. A lockout refuses without looking at the token, so guessing goes no
 * faster by sending more. A credential that was right before (from any address; kept as its
 * SHA-256) is still looked at during a lockout: a neighbour's wrong tries behind the same
 * address (NAT, a proxy) hold back guesses, not the tokens in use, and someone who can send a
 * right one has nothing left to guess. In memory, per app process: a restart forgives, which
 * costs an attacker a restart they cannot cause.
 */
export interface LoginThrottle {
  /**
   * Milliseconds `client` must still wait before a token of theirs is looked at; 0: now.
   * Always 0 for a `credential` that was right before.
   */
  waitMs(client: string, nowMs: number, credential?: string): number;
  /** Records a wrong token; returns the failures in a row and the lockout it started (ms). */
  failed(client: string, nowMs: number): { failures: number; lockedMs: number };
  /**
   * A right token: remembered, so its address's lockouts pass it by. The address's count stays
   * (forgiving it would give a guesser sharing the address five free tries per right request).
   */
  succeeded(credential: string, nowMs: number): void;
}

export interface LoginThrottleOptions {
  /** Failures in a row allowed without delay. */
  freeFailures?: number;
  /** The first lockout; each later one doubles. */
  firstLockMs?: number;
  maxLockMs?: number;
  /** A client quiet this long starts again from zero. */
  forgetAfterMs?: number;
  /** Clients remembered at most (the least recently failed are dropped first). */
  maxClients?: number;
  /** A right credential unused this long is forgotten (then waits out lockouts again). */
  rememberRightMs?: number;
}

export const LOGIN_THROTTLE_DEFAULTS: Required<LoginThrottleOptions> = {
  freeFailures: 5,
  firstLockMs: 1000,
  maxLockMs: 15 * 60_000,
  forgetAfterMs: 60 * 60_000,
  maxClients: 10_000,
  rememberRightMs: 24 * 60 * 60_000,
};

interface ClientRecord {
  failures: number;
  lastFailureAt: number;
  lockedUntil: number;
}

export function createLoginThrottle(options: LoginThrottleOptions = {}): LoginThrottle {
  const settings = { ...LOGIN_THROTTLE_DEFAULTS, ...options };
  const clients = new Map<string, ClientRecord>();
  /** SHA-256 of each right credential → when it was last right. */
  const right = new Map<string, number>();

  function knownRight(credential: string | undefined, nowMs: number): boolean {
    if (credential === undefined) return false;
    const at = right.get(fingerprint(credential));
    return at !== undefined && nowMs - at <= settings.rememberRightMs;
  }

  function current(client: string, nowMs: number): ClientRecord | undefined {
    const record = clients.get(client);
    if (record && nowMs - record.lastFailureAt > settings.forgetAfterMs) {
      clients.delete(client);
      return undefined;
    }
    return record;
  }

  return {
    waitMs(client, nowMs, credential) {
      if (knownRight(credential, nowMs)) return 0;
      const record = current(client, nowMs);
      return record ? Math.max(0, record.lockedUntil - nowMs) : 0;
    },
    failed(client, nowMs) {
      const record = current(client, nowMs) ?? {
        failures: 0,
        lastFailureAt: nowMs,
        lockedUntil: 0,
      };
      record.failures += 1;
      record.lastFailureAt = nowMs;
      const over = record.failures - settings.freeFailures;
      const lockedMs =
        over > 0 ? Math.min(settings.maxLockMs, settings.firstLockMs * 2 ** (over - 1)) : 0;
      record.lockedUntil = nowMs + lockedMs;
      // Re-inserted so the map's order is least recently failed first.
      setNewest(clients, client, record, settings.maxClients);
      return { failures: record.failures, lockedMs };
    },
    succeeded(credential, nowMs) {
      setNewest(right, fingerprint(credential), nowMs, settings.maxClients);
    },
  };
}

/**
 * The key a peer address is throttled under: an IPv4 address as is (IPv4-mapped IPv6 too), an
 * IPv6 address by its /64, which one subscriber usually holds whole; "unknown" without one.
 */
export function clientKey(address: string | undefined): string {
  if (address === undefined || !ipaddr.isValid(address)) return "unknown";
  const parsed = ipaddr.process(address);
  if (parsed.kind() === "ipv4") return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${parts.map((part) => part.toString(16)).join(":")}::/64`;
}

function fingerprint(credential: string): string {
  return createHash("sha256").update(credential).digest("hex");
}
