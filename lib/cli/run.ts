import { type CommandDef, runMain } from "citty";
import { ConfigError, UsageError } from "../config/errors.ts";

/**
 * Runs a citty command as an entry script: a ConfigError or UsageError becomes one line on
 * stderr and exit code 2; any other error one line and exit code 1. Only scripts call this.
 */
export async function runScript(command: CommandDef): Promise<void> {
  try {
    await runMain(command, { rawArgs: process.argv.slice(2) });
  } catch (error) {
    process.exitCode = exitCodeFor(error);
    process.stderr.write(`${errorLine(error)}\n`);
  }
}

export function exitCodeFor(error: unknown): number {
  return error instanceof ConfigError || error instanceof UsageError ? 2 : 1;
}

export function errorLine(error: unknown): string {
  return `error: ${error instanceof Error ? error.message : String(error)}`;
}
