/**
 * `bun run digest <args>` in-process, through citty, at a fixed clock and zone, with stdout and
 * the log captured: for the tests that drive a whole run against the fakes.
 */
import { EventEmitter } from "node:events";
import { runCommand } from "citty";
import { createDigestCommand } from "../../lib/digest/command.ts";
import { createMemoryLogger } from "../../lib/log.ts";

export const RUN_AT = Date.parse("2025-08-03T18:54:41Z");

export async function runDigestCommand(
  env: Record<string, string>,
  rawArgs: string[],
  at = RUN_AT,
) {
  const stdout: string[] = [];
  const logger = createMemoryLogger();
  let error: unknown;
  try {
    await runCommand(
      createDigestCommand({
        env,
        stdout: { write: (text: string) => void stdout.push(text) },
        stderr: { isTTY: false, columns: 120, write: () => {} },
        logger,
        sleep: async () => {},
        now: () => at,
        timeZone: "UTC",
        signals: { source: new EventEmitter() },
      }),
      { rawArgs },
    );
  } catch (caught) {
    error = caught;
  }
  return { stdout: stdout.join(""), logger, error };
}
