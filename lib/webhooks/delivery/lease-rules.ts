import type { Claim, Webhook } from "../model.ts";

/**
 * What makes a send safe: a request starts only while its claim's lease outlasts it, and only
 * with webhook values read recently. Pure rules over a claim and a time; the claim buffer
 * (claim-buffer.ts) and the sender (send-claim.ts) apply them, the configuration checks the
 * lease against the same margin.
 */

/**
 * Room to write a result before another worker may take the delivery over: a request starts
 * only while its lease outlasts it by this much, and the lease must exceed the timeout by it
 * (WEBHOOK_LEASE_MS is checked against it), so a freshly renewed claim always qualifies.
 */
export const LEASE_MARGIN_MS = 1000;

/**
 * A webhook's URL, secret, headers and enabled flag, as read with a claim or a renewal, are used
 * for this long; older, they are read again before a request starts. Changes to a webhook
 * therefore reach requests within this time (plus the request itself).
 */
export const WEBHOOK_FRESH_MS = 500;

/** The shortest timeout a webhook's own timeout is cut to when the lease is nearly over. */
const MIN_REQUEST_MS = 100;

export interface LeaseLimits {
  /** WEBHOOK_TIMEOUT_MS: the timeout of a webhook that sets none of its own. */
  timeoutMs: number;
  leaseMs: number;
}

/** The webhook's own timeout, capped at `maxTimeoutMs`, or WEBHOOK_TIMEOUT_MS. */
export function timeoutMsOf(
  claim: Claim,
  limits: { timeoutMs: number; maxTimeoutMs?: number },
): number {
  const own = claim.webhook.timeoutMs;
  if (own === null || own === undefined) return limits.timeoutMs;
  return Math.min(own, limits.maxTimeoutMs ?? Number.POSITIVE_INFINITY);
}

/** timeoutMsOf, and where it comes from (for the message of an attempt that timed out). */
export function timeoutOf(
  claim: Claim,
  limits: { timeoutMs: number; maxTimeoutMs?: number },
): { ms: number; source: string } {
  const ms = timeoutMsOf(claim, limits);
  const own = claim.webhook.timeoutMs;
  if (own === null || own === undefined) return { ms, source: "WEBHOOK_TIMEOUT_MS" };
  return own <= ms
    ? { ms, source: "the webhook's timeout" }
    : { ms, source: `the webhook's timeout ${own} ms, capped below the lease` };
}

/** How long the lease still holds the delivery for a request started at `t` (or its send slot). */
export function leaseLeft(claim: Claim, t: number): number {
  return (claim.delivery.leaseExpiresAt ?? 0) - Math.max(t, claim.notBefore ?? 0);
}

/**
 * What must be left of a lease for a held claim to start: its timeout and the margin to write
 * the result. Capped at the lease itself for a lease shorter than the configuration allows
 * (tests), so a freshly renewed claim still qualifies.
 */
export function startNeedMs(claim: Claim, limits: LeaseLimits): number {
  const cap = { timeoutMs: limits.timeoutMs, maxTimeoutMs: limits.leaseMs - LEASE_MARGIN_MS };
  return Math.min(timeoutMsOf(claim, cap) + LEASE_MARGIN_MS, limits.leaseMs);
}

/**
 * Right before the request, a last check for a process that was paused (SIGSTOP, a VM freeze)
 * since the claim left the buffer: at least the timeout (half the lease at most) must be left.
 */
export function mayStillSend(claim: Claim, t: number, limits: LeaseLimits): boolean {
  return leaseLeft(claim, t) >= Math.min(limits.timeoutMs, limits.leaseMs / 2);
}

/** The longest a request starting at `t` may take: it ends a margin before the lease does. */
export function requestCapMs(claim: Claim, t: number): number {
  return Math.max(MIN_REQUEST_MS, (claim.delivery.leaseExpiresAt ?? 0) - t - LEASE_MARGIN_MS);
}

/**
 * The newest webhook values this worker has read (with a claim or a renewal), and the questions
 * the claim buffer asks before a held claim starts. Questions only ask: `prepare` returns the
 * claim to send (with the newest values) instead of changing the one held.
 */
export interface Freshness {
  now(): number;
  /** Webhook values read at `readAt` with these claims. */
  remember(claims: readonly Claim[], readAt: number): void;
  /**
   * The claim as it may start at `t`, carrying the newest webhook values; null when it must be
   * renewed first (values too old, webhook disabled, lease too short for the request).
   */
  prepare(claim: Claim, t: number): Claim | null;
}

export function createFreshness(limits: LeaseLimits, now: () => number = Date.now): Freshness {
  const webhooks = new Map<number, { webhook: Webhook; readAt: number }>();
  return {
    now,
    remember(claims, readAt) {
      for (const claim of claims) {
        const known = webhooks.get(claim.webhook.id);
        if (!known || known.readAt <= readAt) {
          webhooks.set(claim.webhook.id, { webhook: claim.webhook, readAt });
        }
      }
    },
    prepare(claim, t) {
      const known = webhooks.get(claim.webhook.id);
      if (!known || t - known.readAt > WEBHOOK_FRESH_MS || !known.webhook.enabled) return null;
      const current =
        known.webhook === claim.webhook ? claim : { ...claim, webhook: known.webhook };
      return leaseLeft(current, t) >= startNeedMs(current, limits) ? current : null;
    },
  };
}
