import { describe, expect, test } from "bun:test";
import { errorLine, exitCodeFor } from "../../lib/cli/run.ts";
import { ConfigError, UsageError } from "../../lib/config/errors.ts";

describe("exitCodeFor()", () => {
  test("gives 2 for bad configuration or usage and 1 for anything else", () => {
    expect(exitCodeFor(new ConfigError("x"))).toBe(2);
    expect(exitCodeFor(new UsageError("x"))).toBe(2);
    expect(exitCodeFor(Object.assign(new Error("bad flag"), { name: "CLIError" }))).toBe(2);
    expect(exitCodeFor(new Error("boom"))).toBe(1);
    expect(exitCodeFor("boom")).toBe(1);
  });
});

describe("errorLine()", () => {
  test("prefixes the message and drops ANSI colours", () => {
    expect(errorLine(new Error("Invalid value for \u001b[36m--format\u001b[39m"))).toBe(
      "error: Invalid value for --format",
    );
    expect(errorLine("plain")).toBe("error: plain");
  });

  test("shows any other control or BiDi character escaped, so a typed value cannot drive the terminal", () => {
    expect(errorLine(new Error('--port="1\u202e\u009b2J\u001b]0;x\u0007" is invalid'))).toBe(
      'error: --port="1\\u202e\\x9b2J\\x1b]0;x\\x07" is invalid',
    );
  });
});
