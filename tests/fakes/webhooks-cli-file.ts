import { afterEach, beforeEach, expect } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCommand } from "citty";
import { exitCodeFor } from "../../lib/cli/run.ts";
import { openSqliteStore } from "../../lib/store/sqlite/store.ts";
import type { Store } from "../../lib/webhooks/ports.ts";
import { createWebhooksCommand } from "../../lib/webhooks-cli/command.ts";

/**
 * `bun run webhooks` in-process on a SQLite file of each test's own (a fresh folder before each
 * test, removed after it): `files` holds the folder, the file and a store open on it for the test
 * to look at; `cli(...args)` runs one command and gives what it wrote, stdout and stderr joined.
 */
export function useWebhooksCliFile(
  prefix: string,
  options: { now: () => number; generateSecret?: () => string },
) {
  const files = { dir: "", path: "", store: undefined as unknown as Store };
  beforeEach(() => {
    files.dir = mkdtempSync(join(tmpdir(), prefix));
    files.path = join(files.dir, "app.db");
    files.store = openSqliteStore(files.path, { now: options.now });
  });
  afterEach(async () => {
    await files.store.close();
    rmSync(files.dir, { recursive: true, force: true });
  });

  async function cli(...rawArgs: string[]): Promise<string> {
    const lines: string[] = [];
    const command = createWebhooksCommand({
      env: { DATABASE_URL: files.path },
      out: (text) => lines.push(text),
      err: (text) => lines.push(text),
      now: options.now,
      ...(options.generateSecret ? { generateSecret: options.generateSecret } : {}),
    });
    await runCommand(command, { rawArgs });
    return lines.join("\n");
  }

  return { files, cli };
}

/** Runs a command that must fail as bad input: exit code 2 and one line of message, returned. */
export async function usageRefusal(run: () => Promise<unknown>): Promise<string> {
  const error = await run().then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(Error);
  expect(exitCodeFor(error)).toBe(2);
  const message = (error as Error).message;
  expect(message).not.toContain("\n");
  return message;
}
