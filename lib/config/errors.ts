/**
 * A bad env var or flag. Entry scripts print `message` as one line and exit with code 2;
 * library code only throws it.
 */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Bad input on a command line or in a request (unknown id, bad JSON, …): also exit code 2. */
export class UsageError extends Error {
  override name = "UsageError";
}
