import { z } from "zod";
import { withoutUrlCredentials } from "../text/url-credentials.ts";
import { ConfigError } from "./errors.ts";

export type Env = Record<string, string | undefined>;

/** Empty strings count as unset, as in t3-env: `FOO= bun run x` means "use the default". */
export function withoutEmpty(env: Env): Env {
  const out: Env = {};
  for (const [key, value] of Object.entries(env)) {
    if (value !== undefined && value.trim() !== "") out[key] = value.trim();
  }
  return out;
}

/** Names whose values are never repeated in a message: a log or a terminal is not for secrets. */
const SECRET_NAME = /TOKEN|SECRET|PASSWORD/i;

/**
 * Parses `env` with `schema`. On failure throws a ConfigError whose message is one line naming
 * the first offending variable, the value given and the expected form, e.g.
 * `MAX_COMMENTS_PER_STORY="abc" is invalid: expected a whole number from 1 to 1000`.
 * The value of a secret (named in `secrets`, or a name with TOKEN, SECRET or PASSWORD in it) is
 * left out: the message says what is wrong with it instead; a URL's `user:password@` too.
 */
export function parseEnv<S extends z.ZodType>(
  schema: S,
  env: Env,
  options: { secrets?: ReadonlySet<string> } = {},
): z.output<S> {
  const cleaned = withoutEmpty(env);
  const result = schema.safeParse(cleaned);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const key = String(issue?.path[0] ?? "environment");
  const given = cleaned[key];
  const secret = options.secrets?.has(key) || SECRET_NAME.test(key);
  const shown =
    given === undefined || secret
      ? ""
      : `=${JSON.stringify(shortened(withoutUrlCredentials(given)))}`;
  throw new ConfigError(`${key}${shown} is invalid: ${issue?.message ?? "unexpected value"}`);
}

/** A value shown in a message: a long one (a thousand addresses) by its start and its length. */
function shortened(value: string): string {
  const MAX = 120;
  return value.length <= MAX ? value : `${value.slice(0, MAX)}… (${value.length} characters)`;
}

/** A whole number in [min, max], given as a string; the message names the expected form. */
export function intInRange(min: number, max: number) {
  const expected = `expected a whole number from ${min} to ${max}`;
  return z
    .string()
    .regex(/^-?\d+$/, expected)
    .transform(Number)
    .pipe(z.number().int().min(min, expected).max(max, expected));
}

/**
 * An http(s) URL with a scheme; a trailing slash is dropped so paths can be appended. `example`,
 * shown in the error, is a value of the variable's own kind (the search API's for HN_SEARCH_URL).
 */
export function httpUrl(example = "http://localhost:11434") {
  const expected = `expected an http:// or https:// URL, e.g. ${example}`;
  return z
    .string()
    .refine((value) => {
      try {
        const url = new URL(value);
        return url.protocol === "http:" || url.protocol === "https:";
      } catch {
        return false;
      }
    }, expected)
    .transform((value) => value.replace(/\/+$/, ""));
}
