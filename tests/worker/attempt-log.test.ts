import { describe, expect, test } from "bun:test";
import { loadOperabilityConfig } from "../../lib/config/operability.ts";
import { createLogger, createMemoryLogger } from "../../lib/log.ts";
import { createFormattedLogger, createJsonLogger } from "../../lib/log-format.ts";
import { stripControl } from "../../lib/text/control.ts";
import { attemptLogEntry, describeAttempt, logAttempt } from "../../lib/worker/attempt-log.ts";
import { claimFixture } from "../fakes/claim.ts";

const T = Date.UTC(2025, 0, 2, 3, 4, 5);
const failure = {
  deliveryId: 17,
  webhookName: "orders",
  attempt: 2,
  statusCode: 500,
  durationMs: 12.4,
  outcome: "http_error" as const,
  error: "HTTP 500 Internal Server Error",
  next: { state: "queued" as const, nextAttemptAt: T },
};
const success = {
  deliveryId: 18,
  webhookName: "orders",
  attempt: 1,
  statusCode: 204,
  durationMs: 3,
  outcome: "success" as const,
  error: null,
};

function collect() {
  const lines: string[] = [];
  return { lines, stream: { write: (chunk: string) => lines.push(chunk) } };
}

describe("logAttempt()", () => {
  test("logs a success at debug level and a failure at warn level, one line each", () => {
    const logger = createMemoryLogger();
    logAttempt(logger, success);
    logAttempt(logger, failure);
    expect(logger.lines).toEqual([
      'debug Delivery 18 to "orders", attempt 1 (3 ms): HTTP 204',
      'warn Delivery 17 to "orders", attempt 2 (12 ms): HTTP 500 Internal Server Error; retry at 2025-01-02T03:04:05.000Z',
    ]);
  });

  test("names timeouts, network errors and blocked attempts, and says when it gives up", () => {
    const base = { ...failure, statusCode: null, next: { state: "failed" as const } };
    expect(
      describeAttempt({ ...base, outcome: "timeout", error: "Timed out after 10000 ms" }),
    ).toBe(
      'Delivery 17 to "orders", attempt 2 (12 ms): Timed out after 10000 ms; failed, no more retries',
    );
    expect(describeAttempt({ ...base, outcome: "network_error", error: null })).toBe(
      'Delivery 17 to "orders", attempt 2 (12 ms): network error; failed, no more retries',
    );
    expect(
      describeAttempt({ ...base, outcome: "blocked", error: "Refused 10.0.0.1", next: undefined }),
    ).toBe('Delivery 17 to "orders", attempt 2 (12 ms): Refused 10.0.0.1');
  });

  test("keeps the duration out of an error's own sentence (the SSRF guard's hint ends the line)", () => {
    const hint =
      "refused loopback address 127.0.0.1 (127.0.0.1:9000): set WEBHOOK_ALLOWED_HOSTS=127.0.0.1:9000 to allow it";
    const line = describeAttempt({
      ...failure,
      statusCode: null,
      durationMs: 1,
      outcome: "blocked",
      error: hint,
      next: undefined,
    });
    expect(line).toBe(`Delivery 17 to "orders", attempt 2 (1 ms): ${hint}`);
  });

  test("shows the status next to an error that does not name it", () => {
    expect(describeAttempt({ ...failure, statusCode: 429, error: "slow down" })).toBe(
      'Delivery 17 to "orders", attempt 2 (12 ms): HTTP 429 (slow down); retry at 2025-01-02T03:04:05.000Z',
    );
  });

  test("attemptLogEntry() takes the event, attempt of max and next step from the claim and result", () => {
    const claim = claimFixture({
      id: 5,
      webhook: { name: "crm", retrySchedule: "day" },
      attempt: 3,
    });
    const entry = attemptLogEntry(
      claim,
      {
        record: {
          startedAt: T,
          durationMs: 7,
          statusCode: 503,
          outcome: "http_error",
          error: "HTTP 503 Service Unavailable",
          responseHeaders: null,
          responseBody: null,
        },
        outcome: { state: "failed" },
      },
      3,
    );
    expect(describeAttempt(entry)).toBe(
      'Delivery 5 (item.created) to "crm", attempt 3/3 (7 ms): HTTP 503 Service Unavailable; failed, no more retries',
    );
  });

  test("masks the password of a URL quoted in an attempt's error, in the line and its fields", () => {
    const claim = claimFixture({
      id: 5,
      webhook: { name: "crm", retrySchedule: "day", url: "https://crm:s3cret@crm.example/in" },
    });
    const error = "fetch https://crm:s3cret@crm.example/in failed";
    const entry = attemptLogEntry(claim, {
      record: {
        startedAt: T,
        durationMs: 7,
        statusCode: null,
        outcome: "network_error",
        error,
        responseHeaders: null,
        responseBody: null,
      },
      outcome: { state: "failed" },
    });
    const logger = createMemoryLogger();
    logAttempt(logger, entry);
    expect(logger.lines).toEqual([
      'warn Delivery 5 (item.created) to "crm", attempt 1 (7 ms): fetch https://crm:***@crm.example/in failed; failed, no more retries',
    ]);
    const { lines, stream } = collect();
    logAttempt(createJsonLogger({ stream: stream as unknown as NodeJS.WriteStream }), entry);
    expect(lines.join("")).toContain("https://crm:***@crm.example/in");
    expect(lines.join("")).not.toContain("s3cret");
  });

  test("keeps terminal control characters from the error and the name out of the line", () => {
    const line = describeAttempt({
      ...failure,
      webhookName: "a\u001b]0;x\u0007",
      error: "boom\r\n\u009b31m",
    });
    expect(stripControl(line)).toBe(line);
    expect(line).not.toContain("\n");
    expect(line).toContain("\\x9b31m");
  });

  test("prints the readable line through the project's pretty logger", () => {
    const { lines, stream } = collect();
    const logger = createLogger({ level: 4, stream: stream as unknown as NodeJS.WriteStream });
    logAttempt(logger, success);
    expect(lines.join("")).toContain('Delivery 18 to "orders", attempt 1 (3 ms): HTTP 204');
    expect(lines.join("")).not.toContain("[object Object]");
  });
});

describe("createJsonLogger()", () => {
  test("writes one JSON object per line with the attempt's fields", () => {
    const { lines, stream } = collect();
    const logger = createJsonLogger({ level: 4, stream, now: () => new Date(T) });
    logAttempt(logger, failure);
    logAttempt(logger, success);
    expect(lines.every((line) => line.endsWith("\n") && !line.slice(0, -1).includes("\n"))).toBe(
      true,
    );
    expect(lines.map((line) => JSON.parse(line))).toEqual([
      {
        time: "2025-01-02T03:04:05.000Z",
        level: "warn",
        msg: 'Delivery 17 to "orders", attempt 2 (12 ms): HTTP 500 Internal Server Error; retry at 2025-01-02T03:04:05.000Z',
        deliveryId: 17,
        webhook: "orders",
        attempt: 2,
        status: 500,
        durationMs: 12,
        outcome: "http_error",
        error: "HTTP 500 Internal Server Error",
        nextAttemptAt: "2025-01-02T03:04:05.000Z",
      },
      {
        time: "2025-01-02T03:04:05.000Z",
        level: "debug",
        msg: 'Delivery 18 to "orders", attempt 1 (3 ms): HTTP 204',
        deliveryId: 18,
        webhook: "orders",
        attempt: 1,
        status: 204,
        durationMs: 3,
        outcome: "success",
        error: null,
      },
    ]);
  });

  test("honours the level: debug lines are dropped at info", () => {
    const { lines, stream } = collect();
    const logger = createJsonLogger({ level: 3, stream });
    logAttempt(logger, success);
    logger.info("Worker started");
    expect(lines.map((line) => JSON.parse(line).msg)).toEqual(["Worker started"]);
  });

  test("does not fold repeated lines, and reports errors by message", () => {
    const { lines, stream } = collect();
    const logger = createJsonLogger({ stream });
    for (let i = 0; i < 8; i++) logger.warn("Same thing again");
    logger.error("Claim failed:", new Error("disk I/O error"));
    expect(lines).toHaveLength(9);
    expect(JSON.parse(lines[8] ?? "")).toMatchObject({
      level: "error",
      msg: "Claim failed: disk I/O error",
      err: { name: "Error", message: "disk I/O error" },
    });
  });

  test("escapes C1 controls, line separators and bidi overrides that JSON leaves raw", () => {
    const { lines, stream } = collect();
    createJsonLogger({ stream }).info("a\u009b31m b\u2028c \u202eevil \u007f");
    const line = lines[0] ?? "";
    expect(line).not.toMatch(/[\u007f-\u009f\u2028\u202e]/);
    expect(JSON.parse(line).msg).toBe("a\u009b31m b\u2028c \u202eevil \u007f");
  });
});

describe("createFormattedLogger()", () => {
  test("writes JSON lines with LOG_FORMAT=json and readable text by default", () => {
    const json = collect();
    createFormattedLogger(loadOperabilityConfig({ LOG_FORMAT: "json" }).log, {
      stream: json.stream as unknown as NodeJS.WriteStream,
    }).warn("Slow receiver");
    expect(JSON.parse(json.lines[0] ?? "")).toMatchObject({ level: "warn", msg: "Slow receiver" });

    const pretty = collect();
    createFormattedLogger(loadOperabilityConfig({}).log, {
      stream: pretty.stream as unknown as NodeJS.WriteStream,
    }).warn("Slow receiver");
    expect(pretty.lines.join("")).toContain("Slow receiver");
    expect(() => JSON.parse(pretty.lines.join(""))).toThrow();
  });
});
