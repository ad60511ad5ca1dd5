import { describe, expect, test } from "bun:test";
import {
  type AttemptResult,
  DEFAULT_RETRY_POLICY,
  decideOutcome,
  retryDelay,
  retrySchedule,
} from "../../../lib/webhooks/policy/retry.ts";
import {
  attemptLimit,
  formatDelay,
  formatRetrySchedule,
  parseRetrySchedule,
  storedRetrySchedule,
} from "../../../lib/webhooks/policy/retry-schedule.ts";

const policy = DEFAULT_RETRY_POLICY;
const NOW = 1_700_000_000_000;
const middle = () => 0.5;
const error500: AttemptResult = { outcome: "http_error", statusCode: 500 };
const HOUR = 3_600_000;

describe("parseRetrySchedule()", () => {
  test.each([
    ["none", "none"],
    ["short", "short"],
    ["day", "day"],
    [" Day ", "day"],
  ] as const)("takes the name %p", (text, name) => {
    expect(parseRetrySchedule(text)).toEqual({ ok: true, value: name });
  });

  test("takes a list of delays with units, in ms", () => {
    expect(parseRetrySchedule("5s, 5m,30m,2h,1d,1m30s")).toEqual({
      ok: true,
      value: [5_000, 300_000, 1_800_000, 7_200_000, 86_400_000, 90_000],
    });
  });

  test.each([
    ["", "expected none, short, day"],
    ["weekly", '"weekly" is not a delay'],
    ["5", '"5" is not a delay'],
    ["5s,,5m", '"" is not a delay'],
    ["500ms", '"500ms" is out of range'],
    ["8d", '"8d" is out of range'],
    [Array(100).fill("1s").join(","), "at most 99"],
  ])("refuses %p, naming the problem", (text, problem) => {
    const parsed = parseRetrySchedule(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.problem).toContain(problem);
  });

  test("formatRetrySchedule() writes what parses back the same", () => {
    for (const text of ["none", "short", "day", "5s,5m,30m,2h", "1m30s,1d"]) {
      const parsed = parseRetrySchedule(text);
      if (!parsed.ok) throw new Error(parsed.problem);
      expect(formatRetrySchedule(parsed.value)).toBe(text);
    }
    expect(formatDelay(1_500)).toBe("1s500ms");
  });

  test("storedRetrySchedule() falls back to day for text that does not parse", () => {
    expect(storedRetrySchedule("5s,5m")).toEqual([5_000, 300_000]);
    expect(storedRetrySchedule("garbled")).toBe("day");
    expect(storedRetrySchedule(null)).toBe("day");
  });
});

describe("attemptLimit()", () => {
  test.each([
    ["none", null, 1],
    ["none", 5, 1],
    ["short", null, 5],
    ["short", 10, 10],
    ["day", null, 8],
    ["day", 5, 5],
    ["day", 20, 8],
  ] as const)("%s with WEBHOOK_MAX_ATTEMPTS %p makes %i attempts", (schedule, cap, attempts) => {
    expect(attemptLimit(schedule, cap)).toBe(attempts);
  });

  test("a list makes one attempt more than its delays, cut by the cap", () => {
    expect(attemptLimit([5_000, 60_000], null)).toBe(3);
    expect(attemptLimit([5_000, 60_000], 2)).toBe(2);
  });
});

describe("retry delays on each schedule", () => {
  test("day is Svix's: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, over 24 hours in all", () => {
    const delays = retrySchedule(policy, "day");
    expect(delays).toEqual([5_000, 300_000, 1_800_000, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR]);
    expect(delays.reduce((a, b) => a + b, 0)).toBeGreaterThan(24 * HOUR);
  });

  test("short is the old doubling, shaped by WEBHOOK_RETRY_BASE_MS and _MAX_MS", () => {
    expect(retrySchedule(policy, "short")).toEqual([10_000, 20_000, 40_000, 80_000]);
    expect(retrySchedule({ ...policy, baseMs: 1000, maxMs: 3000 }, "short")).toEqual([
      1000, 2000, 3000, 3000,
    ]);
  });

  test("none has no retry, and a list is its delays", () => {
    expect(retrySchedule(policy, "none")).toEqual([]);
    expect(decideOutcome(error500, 1, policy, { now: NOW, schedule: "none" })).toEqual({
      state: "failed",
    });
    expect(retrySchedule(policy, [5_000, 300_000])).toEqual([5_000, 300_000]);
  });

  test("a cap shorter than the schedule ends it early", () => {
    const capped = { ...policy, maxAttempts: 3 };
    expect(retrySchedule(capped, "day")).toEqual([5_000, 300_000]);
    expect(decideOutcome(error500, 3, capped, { now: NOW, schedule: "day" })).toEqual({
      state: "failed",
    });
  });

  test("the jitter spreads a day delay by ±20%", () => {
    expect(retryDelay(error500, 4, policy, () => 0, "day")).toBe(0.8 * 2 * HOUR);
    expect(retryDelay(error500, 4, policy, () => 1, "day")).toBe(1.2 * 2 * HOUR);
  });

  test("429/503's 60 s floor and Retry-After still apply to a short day delay", () => {
    expect(retryDelay({ outcome: "http_error", statusCode: 429 }, 1, policy, middle, "day")).toBe(
      60_000,
    );
    const later = { ...error500, retryAfterMs: 120_000 };
    expect(retryDelay(later, 1, policy, middle, [5_000])).toBe(120_000);
  });

  test("a manual retry after the last attempt waits as long as the last step", () => {
    expect(
      decideOutcome(error500, 7, policy, { now: NOW, random: middle, schedule: [1_000, 2_000] }),
    ).toEqual({ state: "failed" });
    expect(retryDelay(error500, 3, policy, middle, [1_000, 2_000])).toBe(2_000);
  });
});
