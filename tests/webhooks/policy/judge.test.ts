import { describe, expect, test } from "bun:test";
import type { AttemptOutcome, Delivered } from "../../../lib/webhooks/model.ts";
import { judgeAttempt } from "../../../lib/webhooks/policy/judge.ts";
import { DEFAULT_RETRY_POLICY } from "../../../lib/webhooks/policy/retry.ts";
import type { RetrySchedule } from "../../../lib/webhooks/policy/retry-schedule.ts";
import { attemptRecord } from "../../fakes/delivery.ts";

const NOW = 1_700_000_000_000;
const policies = { retry: { ...DEFAULT_RETRY_POLICY, maxAttempts: 3 } };

interface Case {
  attempt: string;
  statusCode: number | null;
  outcome?: AttemptOutcome;
  retryAfterMs?: number;
  /** The attempt's number (default 1) and the streak the claim saw (default none). */
  number?: number;
  failingSince?: number | null;
  expected: Omit<Delivered, "record">;
}

// One row per kind of answer: what the delivery does next, whether the whole webhook pauses,
// and what happens to its failure streak. random() = 0.5: no jitter. The webhook retries on
// the short schedule (10 s doubling); the schedules themselves are retry-schedule.test.ts's.
const cases: Case[] = [
  {
    attempt: "200, healthy webhook: nothing more to write",
    statusCode: 200,
    expected: { outcome: { state: "successful" } },
  },
  {
    attempt: "200 to a webhook read with a streak: ends it",
    statusCode: 200,
    failingSince: NOW - 60_000,
    expected: { outcome: { state: "successful" }, streak: "end" },
  },
  {
    attempt: "200 to a webhook whose streak is unknown: ends it to be sure",
    statusCode: 200,
    failingSince: undefined,
    expected: { outcome: { state: "successful" }, streak: "end" },
  },
  {
    attempt: "500 on attempt 1: retried after 10 s",
    statusCode: 500,
    expected: { outcome: { state: "queued", nextAttemptAt: NOW + 10_000 }, streak: "extend" },
  },
  {
    attempt: "500 on the last attempt: failed",
    statusCode: 500,
    number: 3,
    expected: { outcome: { state: "failed" }, streak: "extend" },
  },
  {
    attempt: "410 Gone: failed at once",
    statusCode: 410,
    expected: { outcome: { state: "failed" }, streak: "extend" },
  },
  {
    attempt: "429 with Retry-After 120 s: retried then, webhook paused as long",
    statusCode: 429,
    retryAfterMs: 120_000,
    expected: {
      outcome: { state: "queued", nextAttemptAt: NOW + 120_000 },
      pauseWebhookUntil: NOW + 120_000,
      streak: "extend",
    },
  },
  {
    attempt: "503 without Retry-After: retried after 60 s, webhook paused 30 s",
    statusCode: 503,
    expected: {
      outcome: { state: "queued", nextAttemptAt: NOW + 60_000 },
      pauseWebhookUntil: NOW + 30_000,
      streak: "extend",
    },
  },
  {
    attempt: "502: retried after 60 s, no pause (only 429 and 503 pause the webhook)",
    statusCode: 502,
    expected: { outcome: { state: "queued", nextAttemptAt: NOW + 60_000 }, streak: "extend" },
  },
  {
    attempt: "429 asking for a day: both capped at one hour",
    statusCode: 429,
    retryAfterMs: 86_400_000,
    expected: {
      outcome: { state: "queued", nextAttemptAt: NOW + 3_600_000 },
      pauseWebhookUntil: NOW + 3_600_000,
      streak: "extend",
    },
  },
  {
    attempt: "timeout: retried after 60 s",
    statusCode: null,
    outcome: "timeout",
    expected: { outcome: { state: "queued", nextAttemptAt: NOW + 60_000 }, streak: "extend" },
  },
  {
    attempt: "template error: failed at once, nothing could be sent",
    statusCode: null,
    outcome: "template_error",
    expected: { outcome: { state: "failed" }, streak: "extend" },
  },
];

describe("judgeAttempt()", () => {
  test.each(cases)("$attempt", (row) => {
    const record = {
      ...attemptRecord(row.statusCode),
      outcome: row.outcome ?? attemptRecord(row.statusCode).outcome,
    };
    const judged = judgeAttempt({
      result: {
        record,
        outcome: record.outcome,
        statusCode: row.statusCode,
        retryAfterMs: row.retryAfterMs,
      },
      claim: {
        attempt: row.number ?? 1,
        webhook: {
          failingSince: "failingSince" in row ? row.failingSince : null,
          retrySchedule: "short",
        },
      },
      policies,
      now: NOW,
      random: () => 0.5,
    });
    expect(judged).toEqual({ record, ...row.expected });
  });
});

describe("judgeAttempt() on the webhook's schedule", () => {
  const judge = (retrySchedule: RetrySchedule | undefined, attempt: number) =>
    judgeAttempt({
      result: { record: attemptRecord(500), outcome: "http_error", statusCode: 500 },
      claim: { attempt, webhook: { failingSince: null, retrySchedule } },
      policies: { retry: DEFAULT_RETRY_POLICY },
      now: NOW,
      random: () => 0.5,
    }).outcome;

  test("a webhook read without a schedule retries on the default, day: 5 s after attempt 1", () => {
    expect(judge(undefined, 1)).toEqual({ state: "queued", nextAttemptAt: NOW + 5_000 });
  });

  test("day: 10 h after attempt 7, failed after attempt 8", () => {
    expect(judge("day", 7)).toEqual({ state: "queued", nextAttemptAt: NOW + 36_000_000 });
    expect(judge("day", 8)).toEqual({ state: "failed" });
  });

  test("none: failed after the first attempt", () => {
    expect(judge("none", 1)).toEqual({ state: "failed" });
  });
});
