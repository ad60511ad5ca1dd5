import { afterEach, expect, test } from "bun:test";
import { EventEmitter } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCommand } from "citty";
import { UsageError } from "../../lib/config/errors.ts";
import { createMemoryLogger } from "../../lib/log.ts";
import { openSqliteStore } from "../../lib/store/sqlite/store.ts";
import { createWorkerCommand } from "../../lib/worker/command.ts";
import { change } from "../fakes/change.ts";
import { gate, startFakeEndpoint } from "../fakes/webhook-endpoint.ts";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

test("`worker`: a signal after the same-keypress window aborts the request in flight and releases it", async () => {
  const dir = mkdtempSync(join(tmpdir(), "worker-command-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, "app.db");
  const store = openSqliteStore(path);
  cleanups.push(() => store.close());
  const hold = gate();
  cleanups.push(hold.open);
  const endpoint = startFakeEndpoint(async () => {
    await hold.promise;
    return new Response("ok");
  });
  cleanups.push(() => endpoint.stop());
  await store.webhooks.create({ name: "hook", url: endpoint.url });
  const [id] = await store.queue.enqueue(change());

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
  expect((await store.queue.get(id ?? 0))?.delivery).toMatchObject({
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
