import { describe, expect, test } from "bun:test";
import type { ArgsDef } from "citty";
import { rejectUnknown } from "../../lib/cli/args.ts";
import { UsageError } from "../../lib/config/errors.ts";

const ARGS: ArgsDef = {
  once: { type: "boolean", description: "" },
  headers: { type: "boolean", description: "", default: true },
  "timeout-ms": { type: "string", description: "" },
  format: { type: "string", description: "", alias: "f" },
  id: { type: "positional", description: "" },
};

function refused(rawArgs: string[], maxPositionals = 0): string {
  try {
    rejectUnknown(rawArgs, ARGS, { maxPositionals });
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  return "accepted";
}

describe("rejectUnknown()", () => {
  test("accepts known flags, their values, aliases, --no- forms and camelCase spellings", () => {
    expect(
      refused(["--once", "--timeout-ms", "5", "--timeoutMs=6", "-f", "json", "--no-headers"]),
    ).toBe("accepted");
    expect(refused(["--help"])).toBe("accepted");
    // A flag's value is not taken for an argument, even when it looks like one.
    expect(refused(["--format", "x"])).toBe("accepted");
  });

  test("names an unknown flag, with the nearest known one when a typo is likely", () => {
    expect(refused(["--onec"])).toBe("Unknown option --onec: did you mean --once? (see --help)");
    expect(refused(["--timeout=5"])).toBe(
      "Unknown option --timeout: did you mean --timeout-ms? (see --help)",
    );
    expect(refused(["--zzz"])).toBe("Unknown option --zzz (see --help)");
    expect(refused(["--\u001b[31mred"])).toBe("Unknown option --\\x1b[31mred (see --help)");
  });

  test("refuses stray arguments beyond those the command takes, after -- too", () => {
    expect(refused(["now"])).toBe(
      'Unexpected argument "now": this command takes only options (see --help)',
    );
    expect(refused(["--", "x"])).toBe(
      'Unexpected argument "x": this command takes only options (see --help)',
    );
    expect(refused(["7"], 1)).toBe("accepted");
    expect(refused(["7", "8"], 1)).toBe("Too many arguments: expected at most 1 (see --help)");
  });
});
