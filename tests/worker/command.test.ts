import { afterEach, expect, test } from "bun:test";
import { EventEmitter } from "node:events";
import { runCommand } from "citty";
import { UsageError } from "../../lib/config/errors.ts";
import { createMemoryLogger } from "../../lib/log.ts";
import { createWorkerCommand } from "../../lib/worker/command.ts";
import { oneHeldDelivery } from "../fakes/database-file.ts";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

test("`worker`: a signal after the same-keypress window aborts the request in flight and releases it", async () => {
  const { path, store, endpoint, id } = await oneHeldDelivery({
    cleanups,
    prefix: "worker-command-",
  });

  const source = new EventEmitter();
  let time = 0;
  const logger = createMemoryLogger();
  const running = runCommand(
    createWorkerCommand({
      env: { DATABASE_URL: path, WEBHOOK_ALLOWED_HOSTS: "127.0.0.1" },
      signals: { source, now: () => time },
      logger: () => logger,
    }),
    { rawArgs: [] },
  );
  await endpoint.waitForRequests(1);
  source.emit("SIGINT");
  expect(logger.lines.some((line) => line.includes("Stopping: waiting up to"))).toBe(true);
  time += 1000;
  source.emit("SIGINT");
  await running;
  expect((await store.queue.get(id))?.delivery).toMatchObject({
    state: "queued",
    attempts: 0,
    leaseOwner: null,
  });
  expect(logger.lines.at(-1)).toContain(
    "0 successful, 0 to retry, 0 failed, 0 discarded, 1 released",
  );
});

test("`worker --onec` (a typo of --once) is refused before anything starts", async () => {
  const command = createWorkerCommand({ env: { DATABASE_URL: ":memory:" } });
  await expect(runCommand(command, { rawArgs: ["--onec"] })).rejects.toThrow(
    new UsageError("Unknown option --onec: did you mean --once? (see --help)"),
  );
});
