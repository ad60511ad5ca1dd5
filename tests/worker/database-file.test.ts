import { afterEach, describe, expect, test } from "bun:test";
import { renameSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { loadOperabilityConfig } from "../../lib/config/operability.ts";
import { createMemoryLogger } from "../../lib/log.ts";
import { openSqliteStore } from "../../lib/store/sqlite/store.ts";
import { loadWorkerConfig } from "../../lib/worker/config.ts";
import { DatabaseFileError } from "../../lib/worker/database-file.ts";
import { runWorker } from "../../lib/worker/process.ts";
import { databaseFile } from "../fakes/database-file.ts";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A worker running (not --once) on a database file, checking the file every 10 ms. */
function startWorker() {
  const { dir, path, store } = databaseFile({ cleanups, prefix: "worker-db-file-" });
  const env = { DATABASE_URL: path };
  const logger = createMemoryLogger();
  const stop = new AbortController();
  cleanups.push(() => stop.abort());
  const running = runWorker({
    store,
    config: loadWorkerConfig(env),
    operability: loadOperabilityConfig(env),
    logger,
    stop: stop.signal,
    abortInFlight: new AbortController().signal,
    heartbeat: false,
    fileCheckMs: 10,
  });
  return { dir, path, store, logger, running };
}

describe("the worker and its database file", () => {
  test("exits with a clear error when the file is deleted under it", async () => {
    const { path, logger, running } = startWorker();
    unlinkSync(path);
    const error = await running.then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(DatabaseFileError);
    expect((error as Error).message).toStartWith(
      `Worker stopped: the database file ${path} was deleted while it ran`,
    );
    expect(logger.lines).toContain(
      `error the database file ${path} was deleted: stopping the worker`,
    );
  });

  test("exits when another file is moved in its place", async () => {
    const { dir, path, running } = startWorker();
    const other = openSqliteStore(join(dir, "restored.db"));
    await other.close();
    renameSync(join(dir, "restored.db"), path);
    await expect(running).rejects.toThrow(
      `Worker stopped: the database file ${path} was replaced by another file while it ran`,
    );
  });

  test("keeps running while the file stays, and stops cleanly on a signal", async () => {
    const { path, store } = databaseFile({ cleanups, prefix: "worker-db-file-" });
    let checks = 0;
    const stop = new AbortController();
    const env = { DATABASE_URL: path };
    const running = runWorker({
      store: {
        ...store,
        fileProblem: () => {
          checks += 1;
          if (checks === 5) stop.abort();
          if (store.fileProblem === undefined) throw new Error("a file store has a check");
          return store.fileProblem();
        },
      },
      config: loadWorkerConfig(env),
      operability: loadOperabilityConfig(env),
      logger: createMemoryLogger(),
      stop: stop.signal,
      abortInFlight: new AbortController().signal,
      heartbeat: false,
      fileCheckMs: 1,
    });
    await expect(running).resolves.toBeUndefined();
    expect(checks).toBe(5);
  });
});
