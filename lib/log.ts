import { type ConsolaInstance, createConsola } from "consola";

export type Logger = Pick<
  ConsolaInstance,
  "debug" | "info" | "warn" | "error" | "success" | "start"
>;

/**
 * The project logger. Everything goes to stderr so stdout stays clean for pipes
 * (`bun run digest > digest.md`). `level` follows consola: 3 = info, 4 = debug.
 */
export function createLogger(
  options: { level?: number; stream?: NodeJS.WriteStream } = {},
): Logger {
  const stream = options.stream ?? process.stderr;
  return createConsola({ level: options.level ?? 3, stdout: stream, stderr: stream });
}

/** A logger that keeps lines in memory, for tests that assert what a user would read. */
export function createMemoryLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const record =
    (level: string) =>
    (...args: unknown[]) => {
      lines.push(
        `${level} ${args.map((a) => (a instanceof Error ? a.message : String(a))).join(" ")}`,
      );
    };
  return {
    lines,
    debug: record("debug"),
    info: record("info"),
    warn: record("warn"),
    error: record("error"),
    success: record("success"),
    start: record("start"),
  } as Logger & { lines: string[] };
}
