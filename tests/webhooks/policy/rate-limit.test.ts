import { describe, expect, test } from "bun:test";
import {
  DEFAULT_SLOW_DOWN,
  RATE_HORIZON_MS,
  reserveSlots,
  type SendGate,
  slowDownUntil,
} from "../../../lib/webhooks/policy/rate-limit.ts";

const NOW = 1_700_000_000_000;
const gate = (overrides: Partial<SendGate> = {}): SendGate => ({
  maxPerSecond: null,
  nextSendAt: 0,
  pausedUntil: 0,
  ...overrides,
});

describe("reserveSlots()", () => {
  test("without a limit, every wanted send may start now and nothing is reserved", () => {
    expect(reserveSlots(gate(), { now: NOW, wanted: 3 })).toEqual({
      slots: [NOW, NOW, NOW],
      nextSendAt: 0,
    });
  });

  test("spaces sends 1/maxPerSecond apart and reserves only within the horizon", () => {
    expect(reserveSlots(gate({ maxPerSecond: 2 }), { now: NOW, wanted: 5 })).toEqual({
      slots: [NOW, NOW + 500, NOW + 1000],
      nextSendAt: NOW + 1500,
    });
  });

  test("starts at the next free slot another worker left", () => {
    const reserved = reserveSlots(gate({ maxPerSecond: 2, nextSendAt: NOW + 800 }), {
      now: NOW,
      wanted: 5,
    });
    expect(reserved).toEqual({ slots: [NOW + 800], nextSendAt: NOW + 1300 });
  });

  test("reserves nothing while the next slot is beyond the horizon", () => {
    const full = gate({ maxPerSecond: 1, nextSendAt: NOW + RATE_HORIZON_MS + 1 });
    expect(reserveSlots(full, { now: NOW, wanted: 4 })).toEqual({
      slots: [],
      nextSendAt: NOW + RATE_HORIZON_MS + 1,
    });
  });

  test("builds up no burst credit while idle", () => {
    const idle = gate({ maxPerSecond: 4, nextSendAt: NOW - 3_600_000 });
    expect(reserveSlots(idle, { now: NOW, wanted: 10 }).slots).toEqual([
      NOW,
      NOW + 250,
      NOW + 500,
      NOW + 750,
      NOW + 1000,
    ]);
  });

  test("holds every send until a pause ends, and nothing when it ends beyond the horizon", () => {
    expect(reserveSlots(gate({ pausedUntil: NOW + 300 }), { now: NOW, wanted: 2 }).slots).toEqual([
      NOW + 300,
      NOW + 300,
    ]);
    expect(
      reserveSlots(gate({ maxPerSecond: 10, pausedUntil: NOW + 5_000 }), { now: NOW, wanted: 2 }),
    ).toEqual({ slots: [], nextSendAt: 0 });
  });

  test("keeps slots at least 1/maxPerSecond apart over many claims, with fractional intervals", () => {
    let current = gate({ maxPerSecond: 3 });
    const slots: number[] = [];
    for (let step = 0; step < 40; step++) {
      const now = NOW + step * 137;
      const { slots: got, nextSendAt } = reserveSlots(current, { now, wanted: 2 });
      for (const slot of got) expect(slot).toBeGreaterThanOrEqual(now);
      slots.push(...got);
      current = { ...current, nextSendAt };
    }
    const gaps = slots.slice(1).map((slot, i) => slot - (slots[i] ?? 0));
    // Epoch milliseconds as doubles resolve to about 0.0002 ms: equal up to that.
    expect(Math.min(...gaps)).toBeCloseTo(1000 / 3, 3);
    // Over 40 × 137 ms ≈ 5.5 s at 3/s: the rate is used, not just respected.
    expect(slots.length).toBeGreaterThanOrEqual(16);
  });

  test("wants nothing, gets nothing", () => {
    expect(reserveSlots(gate({ maxPerSecond: 5 }), { now: NOW, wanted: 0 })).toEqual({
      slots: [],
      nextSendAt: 0,
    });
  });
});

describe("slowDownUntil()", () => {
  const at = (statusCode: number | null, retryAfterMs?: number) =>
    slowDownUntil({ statusCode, retryAfterMs, now: NOW });

  test("pauses for the Retry-After read with the answer, on 429 and 503", () => {
    expect(at(429, 120_000)).toBe(NOW + 120_000);
    expect(at(503, 0)).toBe(NOW);
  });

  test("pauses for the default without a usable Retry-After", () => {
    expect(at(429)).toBe(NOW + DEFAULT_SLOW_DOWN.defaultPauseMs);
  });

  test("caps what a receiver can ask for at one hour", () => {
    expect(at(429, 999_999_999_000)).toBe(NOW + 3_600_000);
  });

  test("leaves other answers alone", () => {
    for (const status of [200, 404, 410, 500, 502, null]) expect(at(status, 60_000)).toBeNull();
  });
});
