/**
 * `bun run digest <args>` in-process, through citty, at a fixed clock (`at`, default RUN_AT) and
 * zone, with stdout, stderr and the log captured, `deps` replacing any collaborator: for the tests
 * that drive a whole run against the fakes.
 */
import { EventEmitter } from "node:events";
import { runCommand } from "citty";
import { createDigestCommand, type DigestCommandDeps } from "../../lib/digest/command.ts";
import { loadDigestConfig } from "../../lib/digest/config.ts";
import { runDigest } from "../../lib/digest/digest.ts";
import { createMemoryLogger } from "../../lib/log.ts";
import type { startDigestWorld } from "./digest-world.ts";

export const RUN_AT = Date.parse("2025-08-03T18:54:41Z");

export async function runDigestCommand(
  env: Record<string, string>,
  rawArgs: string[],
  options: { at?: number; deps?: Partial<DigestCommandDeps> } = {},
) {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const logger = createMemoryLogger();
  let error: unknown;
  try {
    await runCommand(
      createDigestCommand({
        env,
        stdout: { write: (text: string) => void stdout.push(text) },
        stderr: { isTTY: false, columns: 120, write: (text: string) => void stderr.push(text) },
        logger,
        sleep: async () => {},
        now: () => options.at ?? RUN_AT,
        timeZone: "UTC",
        signals: { source: new EventEmitter() },
        ...options.deps,
      }),
      { rawArgs },
    );
  } catch (caught) {
    error = caught;
  }
  return { stdout: stdout.join(""), stderr: stderr.join(""), logger, error };
}

type DigestWorld = ReturnType<typeof startDigestWorld>;

/**
 * runDigest() on `world`'s env with `flags` and no cache, on its Ollama's modelled clock, the
 * output and log thrown away: for tests that look at what the model was asked.
 */
export async function runDigestOnModelClock(
  world: DigestWorld,
  flags: Record<string, string> = {},
): Promise<void> {
  await runDigest(loadDigestConfig(world.env, { ...flags, cache: false }), {
    stdout: { write() {} },
    stderr: { write() {} },
    logger: createMemoryLogger(),
    now: world.ollama.now,
  });
}

/** The first prompt `world`'s Ollama was sent for which `match` holds, or "". */
export function promptSent(world: DigestWorld, match: (prompt: string) => boolean): string {
  return world.ollama.generateCalls.map((call) => call.prompt).find(match) ?? "";
}
