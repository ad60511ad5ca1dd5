import type { ArgsDef } from "citty";
import { UsageError } from "../config/errors.ts";
import { escapeControl } from "../text/control.ts";
import { errorMessage } from "../text/error-message.ts";
import type { CliFace, WebhookFields } from "../webhooks/definition/field-faces.ts";
import { fieldByKey } from "../webhooks/definition/field-table.ts";
import type { SaveRefusal } from "../webhooks/definition/save.ts";
import { type Checked, checkGraceSeconds, shown } from "../webhooks/definition/validate.ts";
import type { Webhook, WebhookPatch } from "../webhooks/model.ts";
import { allValues, stringFlag } from "./args.ts";
import { oneLine } from "./format.ts";
import { readOptionFile } from "./option-file.ts";

/**
 * The webhook fields as flags of `webhooks add` and `update`, made from the field table's rows
 * (their CLI faces): the citty arguments and help, and each flag's value read by its row's rule
 * (lib/webhooks/definition/validate.ts), or a one-line UsageError (exit 2) naming the flag:
 * `Invalid --timeout-ms "50": must be …`. Hidden values (templates, condition sets, secrets)
 * are not echoed.
 */

type Command = "add" | "update";

/** A flag's value by its field's check, or a UsageError naming the flag (and the value). */
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

/** The citty arguments of the rows' flags for `command`: add's help says what a flag left out does. */
export function fieldArgs(fields: WebhookFields, command: Command): ArgsDef {
  const args: ArgsDef = {};
  for (const { cli } of fields) {
    if (!cli || (cli.addOnly && command === "update")) continue;
    const update = command === "update";
    const base = update ? (cli.updateDescription ?? cli.description) : cli.description;
    const description = !update && cli.addDefault ? `${base} ${cli.addDefault}` : base;
    args[cli.flag] =
      cli.type === "boolean"
        ? { type: "boolean", description }
        : {
            type: "string",
            description,
            ...(cli.valueHint ? { valueHint: cli.valueHint } : {}),
            ...(cli.required && !update ? { required: true } : {}),
          };
  }
  return args;
}

/** `update`'s flags that clear a field (`--clear-headers`), from the rows. */
export function clearArgs(fields: WebhookFields): ArgsDef {
  const args: ArgsDef = {};
  for (const { cli } of fields) {
    if (cli?.clear) args[cli.clear.flag] = { type: "boolean", description: cli.clear.description };
  }
  return args;
}

/**
 * The fields given as flags, each by its row's rule: the patch (add: what `add` stores beside
 * the store's defaults). A value starting with @ names a file for a row that allows one.
 */
export function readFieldFlags(
  fields: WebhookFields,
  input: { flags: Record<string, unknown>; rawArgs: string[]; command: Command },
  readFile: (path: string) => string = readOptionFile,
): WebhookPatch {
  const { flags, command } = input;
  const patch: Record<string, unknown> = {};
  for (const { key, cli } of fields) {
    if (!cli || (cli.addOnly && command === "update")) continue;
    const value = flagOf(cli, input, readFile);
    if (value !== undefined) patch[key] = value;
    else if (cli.required && command === "add") throw new UsageError(`--${cli.flag} is required`);
    if (command === "update" && cli.clear && flags[cli.clear.flag] === true) {
      if (value !== undefined) {
        throw new UsageError(`Give either --${cli.clear.flag} or --${cli.flag}, not both`);
      }
      patch[key] = cli.repeat ? [] : null;
    }
  }
  return patch as WebhookPatch;
}

/** One row's flag read by its rule; undefined when not given. */
function flagOf(
  cli: CliFace,
  input: { flags: Record<string, unknown>; rawArgs: string[] },
  readFile: (path: string) => string,
): unknown {
  const given = input.flags[cli.flag];
  if (cli.type === "boolean") {
    if (typeof given !== "boolean") return undefined;
    return cli.inverted ? !given : given;
  }
  if (cli.repeat) {
    const { each, all } = cli.repeat;
    const lines = allValues(input.rawArgs, cli.flag);
    if (lines.length === 0) return undefined;
    const total = all(lines.map((line) => flagValue(cli.flag, line, each(line))));
    if (!total.ok) throw new UsageError(`Invalid --${cli.flag}: ${total.problem}`);
    return total.value;
  }
  // A required field given empty is its rule's business ("Invalid --name \"\": required").
  const text =
    cli.required && typeof given === "string"
      ? given
      : cli.file
        ? valueOrFile(given, cli.flag, readFile)
        : stringFlag(given, cli.flag);
  if (text === undefined) return undefined;
  return flagValue(cli.flag, text, cli.read(text), { echo: !cli.hidden });
}

function valueOrFile(
  value: unknown,
  flag: string,
  readFile: (path: string) => string,
): string | undefined {
  const given = stringFlag(value, flag);
  if (given === undefined || !given.startsWith("@")) return given;
  const path = given.slice(1);
  try {
    return readFile(path);
  } catch (error) {
    const code = (error as { code?: string }).code ?? errorMessage(error);
    throw new UsageError(
      `Cannot read --${flag} file ${escapeControl(JSON.stringify(path))}: ${code}; expected @ followed by a readable file`,
    );
  }
}

/** A save's refusal (saveWebhook) as the one-line UsageError of its flag, exit 2. */
export function refuseSave(fields: WebhookFields, refusal: SaveRefusal): never {
  const flag = fieldByKey(fields, refusal.key)?.cli?.flag ?? refusal.key;
  const value = refusal.given === undefined ? "" : ` ${shown(refusal.given)}`;
  throw new UsageError(`Invalid --${flag}${value}: ${refusal.problem}`);
}

/** The options that differ from the defaults (the rows' long notes), for listings. */
export function optionNotes(fields: WebhookFields, webhook: Webhook): string[] {
  return fields.flatMap((row) => {
    const note = row.note?.long(webhook) ?? null;
    return note === null ? [] : [oneLine(note)];
  });
}

/** --grace-seconds: only beside --rotate-secret; undefined when not given (the default grace). */
export function graceSecondsFlag(flags: Record<string, unknown>): number | undefined {
  const grace = stringFlag(flags["grace-seconds"], "grace-seconds");
  if (grace === undefined) return undefined;
  if (!flags["rotate-secret"]) throw new UsageError("--grace-seconds goes with --rotate-secret");
  return flagValue("grace-seconds", grace, checkGraceSeconds(grace));
}
