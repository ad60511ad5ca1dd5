import type { ArgsDef } from "citty";
import { UsageError } from "../config/errors.ts";
import { escapeControl } from "../text/control.ts";

/**
 * Refuses flags the command does not know and more positional arguments than it takes. citty
 * accepts any flag silently, so a typo such as `worker --onec` would start a worker that never
 * ends; every command calls this first.
 */
export function rejectUnknown(
  rawArgs: readonly string[],
  args: ArgsDef,
  options: { maxPositionals?: number } = {},
): void {
  const valued = new Set<string>();
  const known = new Set<string>(["help", "h"]);
  for (const [name, def] of Object.entries(args)) {
    if (def.type === "positional") continue;
    const aliases = "alias" in def && def.alias !== undefined ? [def.alias].flat() : [];
    for (const alias of [name, ...aliases]) {
      known.add(alias);
      if (def.type === "boolean") known.add(`no-${alias}`);
      else valued.add(alias);
    }
  }
  let positionals = 0;
  let firstPositional: string | undefined;
  for (let i = 0; i < rawArgs.length; i++) {
    const token = rawArgs[i] ?? "";
    if (token === "--") {
      positionals += rawArgs.length - i - 1;
      firstPositional ??= rawArgs[i + 1];
      break;
    }
    if (!token.startsWith("-") || token === "-" || /^-\d/.test(token)) {
      positionals++;
      firstPositional ??= token;
      continue;
    }
    const flag = token.split("=")[0] ?? token;
    const name = kebab(flag.replace(/^--?/, ""));
    if (!known.has(name)) {
      const near = closest(name, known);
      throw new UsageError(
        `Unknown option ${escapeControl(flag)}${near ? `: did you mean --${near}?` : ""} (see --help)`,
      );
    }
    if (valued.has(name) && !token.includes("=")) i++;
  }
  const max = options.maxPositionals ?? 0;
  if (positionals > max) {
    throw new UsageError(
      max === 0
        ? `Unexpected argument ${escapeControl(JSON.stringify(firstPositional ?? ""))}: this command takes only options (see --help)`
        : `Too many arguments: expected at most ${max} (see --help)`,
    );
  }
}

function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (ch) => `-${ch.toLowerCase()}`);
}

/**
 * The known flag a typo most likely meant: at most two edits away, or one the typed name begins
 * (`--timeout` for `--timeout-ms`); never a one- or two-letter flag.
 */
function closest(name: string, known: ReadonlySet<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const candidate of known) {
    if (candidate.length < 3) continue;
    const distance =
      name.length >= 4 && candidate.startsWith(name) ? 1 : editDistance(name, candidate);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(
        (previous[j] ?? 0) + 1,
        (current[j - 1] ?? 0) + 1,
        (previous[j - 1] ?? 0) + cost,
      );
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** Every value of a repeatable flag (`--header A --header=B`), in order. */
export function allValues(rawArgs: readonly string[], name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i < rawArgs.length; i++) {
    const token = rawArgs[i] ?? "";
    if (token === "--") break;
    if (token === `--${name}`) {
      const value = rawArgs[i + 1];
      if (value === undefined) throw new UsageError(`--${name} needs a value`);
      values.push(value);
      i++;
    } else if (token.startsWith(`--${name}=`)) {
      values.push(token.slice(name.length + 3));
    }
  }
  return values;
}
