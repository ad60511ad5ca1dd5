import { join } from "node:path";
import type { Subprocess } from "bun";

const ROOT = join(import.meta.dir, "..", "..");

/**
 * `bun scripts/worker.ts` (with `args`) on `databaseUrl`, 127.0.0.1 allowed, `env` on top, its
 * stdout and stderr piped for the test to read. `cleanups` gets its end: a worker still running,
 * or stopped (SIGSTOP), is killed and waited for.
 */
export function spawnWorker(
  databaseUrl: string,
  options: { env?: Record<string, string>; args?: string[]; cleanups: Array<() => unknown> },
): Subprocess<"ignore", "pipe", "pipe"> {
  const child = Bun.spawn(["bun", "scripts/worker.ts", ...(options.args ?? [])], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      WEBHOOK_ALLOWED_HOSTS: "127.0.0.1",
      ...options.env,
    },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  options.cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGCONT");
      child.kill("SIGKILL");
    }
    await child.exited;
  });
  return child;
}
