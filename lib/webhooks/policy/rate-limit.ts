/**
 * How far ahead a claim may reserve send slots. A claimed delivery whose slot is in the future
 * waits in its worker until then, so the lease must outlast this plus the request timeout.
 */
export const RATE_HORIZON_MS = 1000;

/** A webhook's sending gate, as stored (webhooks.max_per_second, next_send_at, paused_until). */
export interface SendGate {
  maxPerSecond: number | null;
  nextSendAt: number;
  pausedUntil: number;
}

export interface SlotReservation {
  /** Start times for up to `wanted` sends, ascending; empty when the webhook must wait. */
  slots: number[];
  /** The gate's new next_send_at (unchanged when nothing was reserved or there is no limit). */
  nextSendAt: number;
}

/**
 * Reserves send slots for a webhook: sends start no earlier than `now`, the end of a pause and
 * the next free slot, spaced 1/maxPerSecond apart, and only within `horizonMs` from now. No
 * burst credit builds up while idle: slots of one webhook are always at least 1/maxPerSecond
 * apart, across all workers sharing the gate.
 */
export function reserveSlots(
  gate: SendGate,
  options: { now: number; wanted: number; horizonMs?: number },
): SlotReservation {
  const { now, wanted, horizonMs = RATE_HORIZON_MS } = options;
  const start = Math.max(now, gate.pausedUntil, gate.nextSendAt);
  if (wanted <= 0 || start > now + horizonMs) return { slots: [], nextSendAt: gate.nextSendAt };
  if (gate.maxPerSecond === null || !(gate.maxPerSecond > 0)) {
    return { slots: Array.from({ length: wanted }, () => start), nextSendAt: gate.nextSendAt };
  }
  const interval = 1000 / gate.maxPerSecond;
  const slots: number[] = [];
  let slot = start;
  while (slots.length < wanted && slot <= now + horizonMs) {
    slots.push(slot);
    slot += interval;
  }
  return { slots, nextSendAt: slot };
}

export interface Admission<T> {
  /** Candidates that may be sent, each not before `notBefore` (epoch ms, maybe fractional). */
  admitted: Array<{ candidate: T; notBefore: number }>;
  /** Candidates over their webhook's rate, inside its pause or without a gate: give them back. */
  refused: T[];
  /** Webhook id → its new next_send_at, for the gates whose slot moved (write these back). */
  nextSendAt: Map<number, number>;
}

/**
 * Applies per-webhook send rates to candidates, given their webhooks' gates as read (and
 * locked) in the claim's transaction. Candidates keep their order; each webhook's first
 * candidates get its earliest slots.
 */
export function admitByGates<T extends { webhookId: number }>(
  candidates: readonly T[],
  gates: ReadonlyMap<number, SendGate>,
  options: { now: number; horizonMs?: number },
): Admission<T> {
  const byWebhook = new Map<number, T[]>();
  for (const candidate of candidates) {
    const group = byWebhook.get(candidate.webhookId);
    if (group) group.push(candidate);
    else byWebhook.set(candidate.webhookId, [candidate]);
  }
  const notBefore = new Map<T, number>();
  const nextSendAt = new Map<number, number>();
  for (const [webhookId, group] of byWebhook) {
    const gate = gates.get(webhookId);
    if (!gate) continue;
    const reservation = reserveSlots(gate, {
      now: options.now,
      wanted: group.length,
      horizonMs: options.horizonMs,
    });
    reservation.slots.forEach((slot, i) => {
      const candidate = group[i];
      if (candidate) notBefore.set(candidate, slot);
    });
    if (reservation.nextSendAt !== gate.nextSendAt)
      nextSendAt.set(webhookId, reservation.nextSendAt);
  }
  const admission: Admission<T> = { admitted: [], refused: [], nextSendAt };
  for (const candidate of candidates) {
    const at = notBefore.get(candidate);
    if (at === undefined) admission.refused.push(candidate);
    else admission.admitted.push({ candidate, notBefore: at });
  }
  return admission;
}

/** Answers that mean "slow down": the whole webhook pauses, not only the delivery that got it. */
export const PAUSE_WEBHOOK_STATUSES: ReadonlySet<number> = new Set([429, 503]);

export interface SlowDownSettings {
  /** Pause when the answer has no usable Retry-After. */
  defaultPauseMs: number;
  /** A receiver cannot pause a webhook for longer than this. */
  maxPauseMs: number;
}

export const DEFAULT_SLOW_DOWN: SlowDownSettings = {
  defaultPauseMs: 30_000,
  maxPauseMs: 3_600_000,
};

/**
 * The time until which a webhook is paused after an answer, honouring its Retry-After (parsed
 * where the response was read, in ms), or null when the answer does not ask to slow down.
 */
export function slowDownUntil(
  answer: { statusCode: number | null; retryAfterMs?: number; now: number },
  settings: SlowDownSettings = DEFAULT_SLOW_DOWN,
): number | null {
  if (answer.statusCode === null || !PAUSE_WEBHOOK_STATUSES.has(answer.statusCode)) return null;
  const delay = answer.retryAfterMs ?? settings.defaultPauseMs;
  return answer.now + Math.min(settings.maxPauseMs, delay);
}
