import ipaddr from "ipaddr.js";
import { setNewest } from "./recent-map.ts";

/**
 * Per-client backoff for wrong admin tokens (login form and bearer header alike): the first
 * few failures are free (typos), then each one locks the client out for twice as long as the
 * one before, up to a cap. A lockout refuses without looking at the token, so guessing goes no
 * faster by sending more. In memory, per app process: a restart forgives, which costs an
 * attacker a restart they cannot cause.
 */
export interface LoginThrottle {
  /** Milliseconds `client` must still wait before a token of theirs is looked at; 0: now. */
  waitMs(client: string, nowMs: number): number;
  /** Records a wrong token; returns the failures in a row and the lockout it started (ms). */
  failed(client: string, nowMs: number): { failures: number; lockedMs: number };
  /** A right token: the client's record is forgotten. */
  succeeded(client: string): void;
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
}

export const LOGIN_THROTTLE_DEFAULTS: Required<LoginThrottleOptions> = {
  freeFailures: 5,
  firstLockMs: 1000,
  maxLockMs: 15 * 60_000,
  forgetAfterMs: 60 * 60_000,
  maxClients: 10_000,
};

interface ClientRecord {
  failures: number;
  lastFailureAt: number;
  lockedUntil: number;
}

export function createLoginThrottle(options: LoginThrottleOptions = {}): LoginThrottle {
  const settings = { ...LOGIN_THROTTLE_DEFAULTS, ...options };
  const clients = new Map<string, ClientRecord>();

  function current(client: string, nowMs: number): ClientRecord | undefined {
    const record = clients.get(client);
    if (record && nowMs - record.lastFailureAt > settings.forgetAfterMs) {
      clients.delete(client);
      return undefined;
    }
    return record;
  }

  return {
    waitMs(client, nowMs) {
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
    succeeded(client) {
      clients.delete(client);
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
