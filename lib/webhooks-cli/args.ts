import type { ArgsDef } from "citty";
import { UsageError } from "../config/errors.ts";
import { DEFAULT_DATABASE_URL } from "../store/database-url.ts";
import { escapeControl } from "../text/control.ts";

export const commonArgs = {
  json: { type: "boolean", description: "print JSON instead of text" },
  "database-url": {
    type: "string",
    description: `database: file path, sqlite:PATH or postgres://… [env DATABASE_URL, default ${DEFAULT_DATABASE_URL}]`,
    valueHint: "url",
  },
  verbose: { type: "boolean", description: "say on stderr which database the command uses" },
} as const satisfies ArgsDef;

export { allValues } from "../cli/args.ts";

/** A whole number flag or argument in [min, max]. */
export function wholeNumber(value: string, what: string, min: number, max: number): number {
  if (!/^\d+$/.test(value.trim()) || Number(value) < min || Number(value) > max) {
    throw new UsageError(
      `Invalid ${what} ${escapeControl(JSON.stringify(value))}: expected a whole number from ${min} to ${max}`,
    );
  }
  return Number(value);
}

/** A string flag's value: undefined when absent, an error when given empty. */
export function stringFlag(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value.trim() === "") {
    throw new UsageError(`--${name} needs a value`);
  }
  return value;
}

const UNITS: Record<string, number> = {
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/** `30d`, `12h`, `90m`, `45s`, `2w` → milliseconds. */
export function parseDuration(value: string, what: string): number {
  const match = /^(\d+)\s*([smhdw])$/.exec(value.trim());
  if (!match) {
    throw new UsageError(
      `Invalid ${what} ${escapeControl(JSON.stringify(value))}: expected a number and a unit (s, m, h, d, w), e.g. 30d`,
    );
  }
  return Number(match[1]) * (UNITS[match[2] ?? "d"] ?? 0);
}
