import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { retryStartup, StartupTimeoutError } from "../../lib/store/postgres/budget.ts";

// Each test waits out the 5 s start-up wait of bun processes: more on a loaded 2-core machine.
setDefaultTimeout(60_000);

const ROOT = join(import.meta.dir, "..", "..");
const cleanups: Array<() => unknown> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

/** A TCP server on port 0 that accepts every connection and never sends a byte. */
function startSilentServer(): number {
  const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  cleanups.push(() => listener.stop(true));
  return listener.port;
}

/** Runs a script against DATABASE_URL; the time is a measured bound, killed well after it. */
async function runAgainst(url: string, script: string, args: string[]) {
  const started = performance.now();
  const child = Bun.spawn(["bun", script, ...args], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: url },
    stdout: "pipe",
    stderr: "pipe",
  });
  const bound = setTimeout(() => child.kill("SIGKILL"), 45_000);
  const code = await child.exited;
  clearTimeout(bound);
  return {
    code,
    signal: child.signalCode,
    seconds: (performance.now() - started) / 1000,
    stderr: await new Response(child.stderr).text(),
  };
}

for (const [command, script, args] of [
  ["webhooks stats", "scripts/webhooks.ts", ["stats"]],
  ["worker --once", "scripts/worker.ts", ["--once"]],
] as const) {
  test(`\`${command}\` against a PostgreSQL that accepts and never answers: one line after the 5 s wait, exit 2`, async () => {
    const port = startSilentServer();
    const run = await runAgainst(`postgres://hooks@127.0.0.1:${port}/inventory`, script, [...args]);
    expect(run.signal).toBeNull();
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      `error: DATABASE_URL: cannot use PostgreSQL at 127.0.0.1:${port}/inventory as hooks: the server did not answer within 5 s\n`,
    );
    // Before, this waited for Bun's 30 s connection timeout; 15 s leaves room for a loaded
    // machine's start-up without letting that back.
    expect(run.seconds).toBeLessThan(15);
  });
}

test("retryStartup() gives up on an attempt that never settles once the one-shot wait is over", async () => {
  const never = new Promise<never>(() => {});
  const error = await retryStartup(() => never, { giveUpAfterMs: 20 }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(StartupTimeoutError);
  expect((error as Error).message).toBe("the server did not answer within 0.02 s");
});

test("a worker waiting for an unreachable PostgreSQL says which server, without the password", async () => {
  const closed = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = closed.port;
  closed.stop(true);
  const child = Bun.spawn(["bun", "scripts/worker.ts"], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: `postgres://hooks:s3cret@127.0.0.1:${port}/inventory` },
    stdout: "ignore",
    stderr: "pipe",
  });
  cleanups.push(() => child.kill("SIGKILL"));
  let stderr = "";
  const decoder = new TextDecoder();
  for await (const chunk of child.stderr) {
    stderr += decoder.decode(chunk, { stream: true });
    if (stderr.includes("retrying with backoff")) break;
  }
  child.kill("SIGTERM");
  expect(await child.exited).toBe(0);
  expect(stderr).toContain(`PostgreSQL at 127.0.0.1:${port}/inventory as hooks unreachable (`);
  expect(stderr).not.toContain("s3cret");
});
