import { type CommandDef, runCommand } from "citty";
import { ConfigError, UsageError } from "../config/errors.ts";
import { escapeControl } from "../text/control.ts";
import { errorMessage } from "../text/error-message.ts";
import { renderHelp, resolveForHelp, wantsColor } from "./help.ts";

export interface RunScriptOptions {
  /** The environment, for NO_COLOR (only scripts read process.env); help has no colour without it. */
  env?: Record<string, string | undefined>;
  rawArgs?: string[];
}

/**
 * Runs a citty command as an entry script: a ConfigError or UsageError becomes one line on
 * stderr and exit code 2; any other error one line and exit code 1. Only scripts call this.
 *
 * citty's own runMain catches every error itself (printing a stack trace and exiting 1) and
 * colours help even into a pipe, so `--help`, `help <command>` and `--version` are handled here
 * and the command is run with runCommand instead.
 */
export async function runScript(
  command: CommandDef,
  options: RunScriptOptions = {},
): Promise<void> {
  const rawArgs = options.rawArgs ?? process.argv.slice(2);
  quietWhenClosed(process.stdout);
  quietWhenClosed(process.stderr);
  try {
    const flags = rawArgs.includes("--") ? rawArgs.slice(0, rawArgs.indexOf("--")) : rawArgs;
    const subCommands =
      typeof command.subCommands === "function"
        ? await command.subCommands()
        : await command.subCommands;
    const asksHelp =
      flags.includes("--help") ||
      flags.includes("-h") ||
      (subCommands !== undefined && flags.find((arg) => !arg.startsWith("-")) === "help");
    if (asksHelp) {
      const target = await resolveForHelp(command, flags);
      if (target.unknown !== undefined) {
        throw new UsageError(
          `Unknown command ${escapeControl(JSON.stringify(target.unknown))} (see --help)`,
        );
      }
      const color = options.env !== undefined && wantsColor(process.stdout, options.env);
      const help = await renderHelp(target.command, { parents: target.parents, color });
      process.stdout.write(`${help}\n`);
      return;
    }
    if (rawArgs.length === 1 && (rawArgs[0] === "--version" || rawArgs[0] === "-v")) {
      const meta = await resolveMeta(command);
      if (meta?.version) {
        process.stdout.write(`${meta.version}\n`);
        return;
      }
    }
    // A command with a default subcommand (`app` serves) may be given none.
    if (subCommands !== undefined && command.default === undefined) {
      checkCommandGiven(flags, Object.keys(subCommands));
    }
    await runCommand(command, { rawArgs });
  } catch (error) {
    process.exitCode = exitCodeFor(error);
    process.stderr.write(`${errorLine(error)}\n`);
  }
}

/**
 * `bun run webhooks list | head -1`: once the reader is gone, further output has nowhere to go.
 * Without a listener the EPIPE would be thrown as an uncaught error with a stack trace; with
 * it, later writes are dropped and the command ends as it would have. The same for stderr, so
 * a worker whose log pipe closed (`bun run worker 2>&1 | head`) does not die mid-delivery. A
 * full disk under a log file (ENOSPC) is the same: the lines are lost, the work goes on and a
 * normal stop exits 0 (it exited 1, an uncaught write error, before).
 */
const OUTPUT_GONE: ReadonlySet<string> = new Set(["EPIPE", "ENOSPC"]);

function quietWhenClosed(stream: NodeJS.WriteStream): void {
  if (stream.listenerCount("error") > 0) return;
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (!OUTPUT_GONE.has(error.code ?? "")) throw error;
  });
}

/**
 * `webhooks` alone names no command; `webhooks --json list` puts an option where citty would
 * silently drop it. Both are one line and exit code 2.
 */
function checkCommandGiven(flags: readonly string[], names: readonly string[]): void {
  const at = flags.findIndex((arg) => !arg.startsWith("-"));
  if (at === -1) throw new UsageError(`Give a command: ${names.join(", ")} (see --help)`);
  const early = flags[0];
  if (at > 0 && early !== undefined) {
    throw new UsageError(
      `Unknown option ${escapeControl(early.split("=")[0] ?? early)} before the command: options go after it (see --help)`,
    );
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
  const message = errorMessage(error);
  // Then any control or BiDi character left (a value the user typed, a name a peer sent) is
  // shown escaped, so an error line cannot drive the terminal.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing ANSI colour escapes.
  return `error: ${escapeControl(message.replace(/\u001b\[[0-9;]*m/g, ""))}`;
}
