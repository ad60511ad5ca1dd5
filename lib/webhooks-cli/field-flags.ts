import { UsageError } from "../config/errors.ts";
import {
  type Checked,
  checkEvents,
  checkGraceSeconds,
  checkHeader,
  checkHeadersTotal,
  checkSecret,
  shown,
} from "../webhooks/definition/validate.ts";
import { allValues, stringFlag } from "./args.ts";

/**
 * The webhook field rules (lib/webhooks/definition/validate.ts) as flags: a flag's value by its field's
 * check, or a one-line UsageError (exit 2) naming the flag: `Invalid --timeout-ms "50": must be …`.
 * Long texts (templates, condition sets) and secrets are not echoed.
 */
export function flagValue<T>(
  flag: string,
  given: string,
  checked: Checked<T>,
  options: { echo?: boolean } = {},
): T {
  if (checked.ok) return checked.value;
  const value = options.echo === false ? "" : ` ${shown(given)}`;
  throw new UsageError(`Invalid --${flag}${value}: ${checked.problem}`);
}

/** A flag's value by its field's check, or a UsageError naming the flag and the value. */
export function field<T>(flag: string, given: string, check: (text: string) => Checked<T>): T {
  return flagValue(flag, given, check(given));
}

/** --events: a comma list. */
export function eventsFlag(list: string): string[] {
  return flagValue("events", list, checkEvents(list.split(",")));
}

/** Every --header, each `Name: Value`. */
export function headerFlags(rawArgs: string[]): Array<[string, string]> {
  const headers = allValues(rawArgs, "header").map((line) => field("header", line, checkHeader));
  const total = checkHeadersTotal(headers);
  if (!total.ok) throw new UsageError(`Invalid --header: ${total.problem}`);
  return headers;
}

/** Never echoed: a secret typed with a typo is still a secret. */
export function secretFlag(given: string): string {
  return flagValue("secret", given, checkSecret(given), { echo: false });
}

/** --grace-seconds: only beside --rotate-secret; undefined when not given (the default grace). */
export function graceSecondsFlag(flags: Record<string, unknown>): number | undefined {
  const grace = stringFlag(flags["grace-seconds"], "grace-seconds");
  if (grace === undefined) return undefined;
  if (!flags["rotate-secret"]) throw new UsageError("--grace-seconds goes with --rotate-secret");
  return field("grace-seconds", grace, checkGraceSeconds);
}
