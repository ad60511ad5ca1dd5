import { type CommandDef, renderUsage, runCommand } from "citty";
import { ConfigError, UsageError } from "../config/errors.ts";

/**
 * Runs a citty command as an entry script: a ConfigError or UsageError becomes one line on
 * stderr and exit code 2; any other error one line and exit code 1. Only scripts call this.
 *
 * citty's own runMain catches every error itself (printing a stack trace and exiting 1), so
 * `--help`/`--version` are handled here and the command is run with runCommand instead.
 */
export async function runScript(
  command: CommandDef,
  rawArgs: string[] = process.argv.slice(2),
): Promise<void> {
  try {
    const flags = rawArgs.includes("--") ? rawArgs.slice(0, rawArgs.indexOf("--")) : rawArgs;
    if (flags.includes("--help") || flags.includes("-h")) {
      process.stdout.write(`${await renderUsage(command)}\n`);
      return;
    }
    if (rawArgs.length === 1 && (rawArgs[0] === "--version" || rawArgs[0] === "-v")) {
      const meta = await resolveMeta(command);
      if (meta?.version) {
        process.stdout.write(`${meta.version}\n`);
        return;
      }
    }
    await runCommand(command, { rawArgs });
  } catch (error) {
    process.exitCode = exitCodeFor(error);
    process.stderr.write(`${errorLine(error)}\n`);
  }
}

async function resolveMeta(command: CommandDef): Promise<{ version?: string } | undefined> {
  const meta = command.meta;
  return typeof meta === "function" ? await meta() : await meta;
}

/** citty reports bad flags (e.g. an enum value not in its options) as a CLIError. */
function isCittyUsageError(error: unknown): boolean {
  return error instanceof Error && error.name === "CLIError";
}

export function exitCodeFor(error: unknown): number {
  return error instanceof ConfigError || error instanceof UsageError || isCittyUsageError(error)
    ? 2
    : 1;
}

export function errorLine(error: unknown): string {
  // citty colours flag names in its messages; strip the escapes so the line stays plain text.
  const message = error instanceof Error ? error.message : String(error);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing ANSI colour escapes.
  return `error: ${message.replace(/\u001b\[[0-9;]*m/g, "")}`;
}
