import type { ArgsDef } from "citty";
import { z } from "zod";
import { type Env, parseEnv, withoutEmpty } from "./env.ts";
import { ConfigError } from "./errors.ts";

/**
 * One setting a command reads: its environment variable and/or flag, the form a value must take
 * (a zod schema from the string given), and its default. Parsing, the citty arguments and the
 * help text are all written from the same table, so they cannot drift apart.
 */
export interface Field<K extends string = string> {
  key: K;
  env?: string;
  /** The flag without its dashes, e.g. `timeout-ms`. */
  flag?: string;
  alias?: string;
  schema: z.ZodType;
  /** A value, or one computed from the fields before it (e.g. lease = timeout + margin). */
  default?: string | number | boolean | ((values: Record<string, unknown>) => unknown);
  /** How help shows a computed default, e.g. "four times the concurrency". */
  defaultText?: string;
  /** Shown in help as `--flag=<hint>`. */
  hint?: string;
  description: string;
  /** Never echoed in an error message (tokens, passwords). */
  secret?: boolean;
}

export type Flags = Record<string, unknown>;

export interface LoadedFields<K extends string> {
  values: Record<K, unknown>;
  /** Keys given by a flag or a variable rather than defaulted. */
  given: Set<K>;
  /** Where a given value came from, for messages: `--lease-ms` or `WEBHOOK_LEASE_MS`. */
  sourceOf(key: K): string;
}

/**
 * Parses `fields` from env and flags, once: a flag beats its variable, empty values count as
 * unset, a bad value is a one-line ConfigError naming the flag or variable and the form.
 */
export function loadFields<K extends string>(
  fields: readonly Field<K>[],
  env: Env,
  flags: Flags = {},
): LoadedFields<K> {
  const envShape: Record<string, z.ZodType> = {};
  const flagShape: Record<string, z.ZodType> = {};
  const flagValues: Env = {};
  const secrets = new Set<string>();
  for (const field of fields) {
    if (field.env) envShape[field.env] = field.schema.optional();
    if (field.secret && field.env) secrets.add(field.env);
    if (!field.flag) continue;
    const name = `--${field.flag}`;
    flagShape[name] = field.schema.optional();
    if (field.secret) secrets.add(name);
    const value = flags[field.flag];
    if (value === undefined) continue;
    if (typeof value !== "string" || value.trim() === "") {
      throw new ConfigError(`${name} needs a value: ${expectedForm(field)}`);
    }
    flagValues[name] = value;
  }
  const fromEnv = parseEnv(z.object(envShape), withoutEmpty(env), { secrets });
  const fromFlags = parseEnv(z.object(flagShape), flagValues, { secrets });

  const values = {} as Record<K, unknown>;
  const given = new Set<K>();
  const sources = new Map<K, string>();
  for (const field of fields) {
    const flagValue = field.flag ? fromFlags[`--${field.flag}`] : undefined;
    const envValue = field.env ? fromEnv[field.env] : undefined;
    const value = flagValue ?? envValue;
    if (value !== undefined) {
      given.add(field.key);
      sources.set(field.key, flagValue !== undefined ? `--${field.flag}` : (field.env ?? ""));
      values[field.key] = value;
      continue;
    }
    values[field.key] =
      typeof field.default === "function"
        ? (field.default as (values: Record<string, unknown>) => unknown)(values)
        : field.default;
  }
  return {
    values,
    given,
    sourceOf: (key) => {
      const field = fields.find((f) => f.key === key);
      return sources.get(key) ?? field?.env ?? (field?.flag ? `--${field.flag}` : key);
    },
  };
}

/** The citty arguments of the fields that have a flag; each description names its variable and default. */
export function fieldArgs(fields: readonly Field[]): ArgsDef {
  const args: ArgsDef = {};
  for (const field of fields) {
    if (!field.flag) continue;
    // No citty `default`: a defaulted flag would always be "given" and override the variable.
    args[field.flag] = {
      type: "string",
      description: `${field.description}${bracket(field)}`,
      valueHint: field.hint ?? "value",
      ...(field.alias ? { alias: field.alias } : {}),
    };
  }
  return args;
}

/** A variable a command reads, as help lists it. */
export interface EnvVarHelp {
  name: string;
  description: string;
}

/** The help lines for the variables of `fields` that have no flag of their own. */
export function fieldEnvironment(fields: readonly Field[]): EnvVarHelp[] {
  return fields
    .filter((field) => field.env && !field.flag)
    .map((field) => ({
      name: field.env ?? "",
      description: `${field.description}${bracket({ ...field, env: undefined })}`,
    }));
}

/** ` [env X, default Y]`, or nothing when the field has neither. */
function bracket(field: Pick<Field, "env" | "default" | "defaultText">): string {
  const parts: string[] = [];
  if (field.env) parts.push(`env ${field.env}`);
  const shown = defaultShown(field);
  if (shown !== undefined) parts.push(`default ${shown}`);
  return parts.length > 0 ? ` [${parts.join(", ")}]` : "";
}

function defaultShown(field: Pick<Field, "default" | "defaultText">): string | undefined {
  if (field.defaultText !== undefined) return field.defaultText;
  if (field.default === undefined || typeof field.default === "function") return undefined;
  return String(field.default);
}

function expectedForm(field: Field): string {
  const result = field.schema.safeParse("");
  return result.success
    ? "expected a value"
    : (result.error.issues[0]?.message ?? "expected a value");
}
