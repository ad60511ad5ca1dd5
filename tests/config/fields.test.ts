import { describe, expect, test } from "bun:test";
import { z } from "zod";
import { intInRange } from "../../lib/config/env.ts";
import { ConfigError } from "../../lib/config/errors.ts";
import { type Field, fieldArgs, fieldEnvironment, loadFields } from "../../lib/config/fields.ts";

type Key = "timeoutMs" | "leaseMs" | "retryMs" | "token";

const FIELDS: readonly Field<Key>[] = [
  {
    key: "timeoutMs",
    env: "TIMEOUT_MS",
    flag: "timeout-ms",
    schema: intInRange(100, 1000),
    default: 500,
    hint: "ms",
    description: "timeout",
  },
  {
    key: "leaseMs",
    env: "LEASE_MS",
    flag: "lease-ms",
    schema: intInRange(100, 10_000),
    default: (values) => Number(values.timeoutMs) + 30,
    defaultText: "the timeout + 30",
    description: "lease",
  },
  {
    key: "retryMs",
    env: "RETRY_MS",
    schema: intInRange(1, 100),
    default: 10,
    description: "retry",
  },
  {
    key: "token",
    env: "API_KEYish",
    flag: "key",
    schema: z.string().min(16, "expected at least 16 characters"),
    secret: true,
    description: "key",
  },
];

function message(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error("no error");
}

describe("loadFields()", () => {
  test("a flag beats its variable, an empty variable counts as unset, defaults fill the rest", () => {
    const { values, given, sourceOf } = loadFields(
      FIELDS,
      { TIMEOUT_MS: "200", LEASE_MS: " ", RETRY_MS: "7" },
      { "timeout-ms": "300" },
    );
    expect(values).toEqual({ timeoutMs: 300, leaseMs: 330, retryMs: 7, token: undefined });
    expect([...given].sort()).toEqual(["retryMs", "timeoutMs"]);
    expect(sourceOf("timeoutMs")).toBe("--timeout-ms");
    expect(sourceOf("retryMs")).toBe("RETRY_MS");
  });

  test("a bad value is one line naming the flag or variable, the value and the form", () => {
    expect(message(() => loadFields(FIELDS, { RETRY_MS: "lots" }))).toBe(
      'RETRY_MS="lots" is invalid: expected a whole number from 1 to 100',
    );
    expect(message(() => loadFields(FIELDS, {}, { "timeout-ms": "5" }))).toBe(
      '--timeout-ms="5" is invalid: expected a whole number from 100 to 1000',
    );
    expect(message(() => loadFields(FIELDS, {}, { "timeout-ms": true }))).toBe(
      "--timeout-ms needs a value: expected a whole number from 100 to 1000",
    );
  });

  test("a secret field's value is never repeated, from a flag or a variable", () => {
    expect(message(() => loadFields(FIELDS, { API_KEYish: "nearly-right" }))).toBe(
      "API_KEYish is invalid: expected at least 16 characters",
    );
    expect(message(() => loadFields(FIELDS, {}, { key: "nearly-right" }))).toBe(
      "--key is invalid: expected at least 16 characters",
    );
  });
});

describe("fieldArgs() and fieldEnvironment()", () => {
  test("flags carry their variable and default in the description; variables without a flag are listed apart", () => {
    const args = fieldArgs(FIELDS);
    expect(Object.keys(args)).toEqual(["timeout-ms", "lease-ms", "key"]);
    expect(args["timeout-ms"]).toMatchObject({
      type: "string",
      valueHint: "ms",
      description: "timeout [env TIMEOUT_MS, default 500]",
    });
    expect(args["lease-ms"]?.description).toBe("lease [env LEASE_MS, default the timeout + 30]");
    expect(fieldEnvironment(FIELDS)).toEqual([
      { name: "RETRY_MS", description: "retry [default 10]" },
    ]);
  });
});
