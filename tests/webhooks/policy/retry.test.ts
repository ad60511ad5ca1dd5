import { describe, expect, test } from "bun:test";
import {
  type AttemptResult,
  DEFAULT_RETRY_POLICY,
  decideOutcome,
  type RetryPolicy,
  retryDelay,
  retrySchedule,
} from "../../../lib/webhooks/policy/retry.ts";

const policy: RetryPolicy = DEFAULT_RETRY_POLICY;
const NOW = 1_700_000_000_000;
const middle = () => 0.5; // no jitter: random() = 0.5 puts the spread at 0
const http = (statusCode: number, extra: Partial<AttemptResult> = {}): AttemptResult => ({
  outcome: statusCode >= 200 && statusCode < 300 ? "success" : "http_error",
  statusCode,
  ...extra,
});

describe("decideOutcome", () => {
  test.each([200, 201, 204, 299])("decideOutcome() marks HTTP %i successful", (status) => {
    expect(decideOutcome(http(status), 1, policy, { now: NOW })).toEqual({ state: "successful" });
  });

  test("decideOutcome() fails a 410 Gone at once, even on the first attempt", () => {
    expect(decideOutcome(http(410), 1, policy, { now: NOW })).toEqual({ state: "failed" });
  });

  test.each([
    ["HTTP 301", http(301)],
    ["HTTP 302", http(302)],
    ["HTTP 400", http(400)],
    ["HTTP 404", http(404)],
    ["HTTP 500", http(500)],
    ["timeout", { outcome: "timeout", statusCode: null } as AttemptResult],
    ["network error", { outcome: "network_error", statusCode: null } as AttemptResult],
    ["SSRF refusal", { outcome: "blocked", statusCode: null } as AttemptResult],
  ])("decideOutcome() retries after %s", (_label, result) => {
    const outcome = decideOutcome(result, 1, policy, { now: NOW, random: middle });
    expect(outcome.state).toBe("queued");
  });

  test("decideOutcome() fails after maxAttempts attempts", () => {
    const five = { ...policy, maxAttempts: 5 };
    expect(decideOutcome(http(500), 4, five, { now: NOW }).state).toBe("queued");
    expect(decideOutcome(http(500), 5, five, { now: NOW })).toEqual({ state: "failed" });
    // A manual retry past the limit gets exactly one more attempt.
    expect(decideOutcome(http(500), 6, five, { now: NOW })).toEqual({ state: "failed" });
  });

  test("decideOutcome() with maxAttempts 1 never retries (NetBox's default)", () => {
    const once = { ...policy, maxAttempts: 1 };
    expect(decideOutcome(http(503), 1, once, { now: NOW })).toEqual({ state: "failed" });
  });
});

describe("retryDelay", () => {
  test("retrySchedule() is 10 s doubling: 10, 20, 40, 80 s for 5 attempts", () => {
    expect(retrySchedule(policy)).toEqual([10_000, 20_000, 40_000, 80_000]);
  });

  test("retrySchedule() is capped at one hour", () => {
    const long = retrySchedule({ ...policy, maxAttempts: 12 });
    expect(long.slice(-3)).toEqual([2_560_000, 3_600_000, 3_600_000]);
  });

  test("retryDelay() spreads each delay by ±20%", () => {
    expect(retryDelay(http(500), 1, policy, () => 0)).toBe(8000);
    expect(retryDelay(http(500), 1, policy, () => 1)).toBe(12_000);
    expect(retryDelay(http(500), 3, policy, () => 0.5)).toBe(40_000);
  });

  test("decideOutcome() schedules the next attempt at now + delay", () => {
    expect(decideOutcome(http(500), 2, policy, { now: NOW, random: middle })).toEqual({
      state: "queued",
      nextAttemptAt: NOW + 20_000,
    });
  });

  test.each([429, 502, 503, 504])("retryDelay() waits at least 60 s after HTTP %i", (status) => {
    expect(retryDelay(http(status), 1, policy, middle)).toBe(60_000);
  });

  test("retryDelay() waits at least 60 s after a timeout", () => {
    expect(retryDelay({ outcome: "timeout", statusCode: null }, 1, policy, middle)).toBe(60_000);
  });

  test("retryDelay() honours a longer Retry-After", () => {
    expect(retryDelay(http(503, { retryAfterMs: 120_000 }), 1, policy, middle)).toBe(120_000);
    expect(retryDelay(http(500, { retryAfterMs: 30_000 }), 1, policy, middle)).toBe(30_000);
  });

  test("retryDelay() never retries sooner than the backoff, even when Retry-After is shorter", () => {
    expect(retryDelay(http(500, { retryAfterMs: 1000 }), 3, policy, middle)).toBe(40_000);
  });

  test("retryDelay() caps Retry-After at one hour", () => {
    const day = 86_400_000;
    expect(retryDelay(http(429, { retryAfterMs: day }), 1, policy, middle)).toBe(3_600_000);
  });
});
