import { describe, expect, test } from "bun:test";
import { backoffDelay, parseRetryAfter } from "../../lib/http/backoff.ts";

describe("backoffDelay()", () => {
  const base = { baseMs: 100, maxMs: 1_000, jitter: 0 };

  test("doubles from baseMs with each retry", () => {
    expect([1, 2, 3, 4].map((retry) => backoffDelay(retry, base))).toEqual([100, 200, 400, 800]);
  });

  test("never exceeds maxMs", () => {
    expect(backoffDelay(10, base)).toBe(1_000);
    expect(backoffDelay(10, { ...base, jitter: 0.5, random: () => 1 })).toBe(1_000);
  });

  test("spreads the delay by ±jitter", () => {
    const options = { baseMs: 1_000, maxMs: 10_000, jitter: 0.2 };
    expect(backoffDelay(1, { ...options, random: () => 0 })).toBe(800);
    expect(backoffDelay(1, { ...options, random: () => 0.5 })).toBe(1_000);
    expect(backoffDelay(1, { ...options, random: () => 1 })).toBe(1_200);
  });

  test("is zero when baseMs is zero (tests that must not wait)", () => {
    expect(backoffDelay(3, { baseMs: 0, maxMs: 1_000 })).toBe(0);
  });
});

describe("parseRetryAfter()", () => {
  const now = Date.parse("2025-08-03T18:00:00Z");

  test("reads delta seconds", () => {
    expect(parseRetryAfter("120", now)).toBe(120_000);
    expect(parseRetryAfter(" 0 ", now)).toBe(0);
  });

  test("reads an HTTP date relative to now, never negative", () => {
    expect(parseRetryAfter("Sun, 03 Aug 2025 18:00:30 GMT", now)).toBe(30_000);
    expect(parseRetryAfter("Sun, 03 Aug 2025 17:00:00 GMT", now)).toBe(0);
  });

  test("returns undefined when absent or unparseable", () => {
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter("", now)).toBeUndefined();
    expect(parseRetryAfter("soon", now)).toBeUndefined();
  });
});
