import { Database } from "bun:sqlite";
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { copyFileSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openSqliteStore } from "../../lib/store/sqlite/store.ts";
import type { Store } from "../../lib/webhooks/ports.ts";
import { itemChange } from "../fakes/change.ts";
import { outputOf } from "../fakes/process-output.ts";
import { tempDirs } from "../fakes/temp-dirs.ts";
import { gate, startFakeEndpoint } from "../fakes/webhook-endpoint.ts";
import { spawnWorker } from "../fakes/worker-process.ts";

// Worker processes, a backup process and a lease that must run out after the restore.
setDefaultTimeout(120_000);

const ROOT = join(import.meta.dir, "..", "..");
const TOTAL = 300;
/** Answered at once before the backup; the rest hang until it is taken: it falls mid-delivery. */
const BEFORE_BACKUP = 120;
const WORKER_ENV = {
  WEBHOOK_CONCURRENCY: "8",
  WEBHOOK_TIMEOUT_MS: "1000",
  WEBHOOK_LEASE_MS: "2500",
};

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const tempDir = tempDirs("backup-");

function backup(databaseUrl: string, file: string) {
  const child = Bun.spawn(["bun", "scripts/app.ts", "backup", file], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl, NO_COLOR: "1" },
    stdout: "pipe",
    stderr: "pipe",
  });
  return outputOf(child);
}

/** Polls the database (the worker is another process) until every delivery is successful. */
async function untilAllSuccessful(store: Store): Promise<void> {
  const deadline = performance.now() + 60_000;
  while ((await store.queue.stats()).successful < TOTAL && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect((await store.queue.stats()).successful).toBe(TOTAL);
}

async function stopped(worker: ReturnType<typeof spawnWorker>): Promise<void> {
  worker.kill("SIGTERM");
  expect(await worker.exited).toBe(0);
}

function messagesIn(path: string, where: string): Set<string> {
  const db = new Database(path, { readonly: true });
  try {
    const rows = db.query<{ id: string }, []>(`SELECT message_id AS id FROM deliveries ${where}`);
    return new Set(rows.all().map((row) => row.id));
  } finally {
    db.close();
  }
}

describe("bun run app backup FILE", () => {
  test("a backup taken mid-delivery restores a queue that resumes: nothing lost, nothing recorded as sent is sent again", async () => {
    const dir = tempDir();
    const path = join(dir, "app.db");
    const copy = join(dir, "backup.db");
    const { open: releaseHeld, promise: held } = gate();
    const endpoint = startFakeEndpoint(async (_request, index) => {
      if (index >= BEFORE_BACKUP) await held;
      return new Response("ok");
    });
    cleanups.push(() => endpoint.stop());
    const store = openSqliteStore(path);
    cleanups.push(() => store.close());
    await store.webhooks.create({ name: "hook", url: `${endpoint.url}/in` });
    await store.queue.enqueueMany(Array.from({ length: TOTAL }, (_, i) => itemChange(i + 1)));

    const worker = spawnWorker(path, { env: WORKER_ENV, cleanups });
    // Requests past BEFORE_BACKUP hang: the backup sees results written, leases held, rows queued.
    await endpoint.waitForRequests(BEFORE_BACKUP + 4);
    const taken = await backup(path, copy);
    expect(taken.stderr).toBe("");
    expect(taken.code).toBe(0);
    expect(taken.stdout).toContain(`to ${copy}`);
    expect(taken.stdout).toContain("To restore:");
    expect(statSync(copy).mode & 0o777).toBe(0o600);
    releaseHeld();
    await untilAllSuccessful(store);
    await stopped(worker);
    await store.close();

    const recordedSent = messagesIn(copy, "WHERE state = 'successful'");
    const everyMessage = messagesIn(copy, "");
    expect(everyMessage.size).toBe(TOTAL);
    // Mid-delivery: some were recorded as sent, others not yet.
    expect(recordedSent.size).toBeGreaterThan(0);
    expect(recordedSent.size).toBeLessThan(TOTAL);

    // The restore as the command's report says: everything stopped, -wal and -shm removed,
    // the backup copied in place.
    for (const file of [path, `${path}-wal`, `${path}-shm`]) rmSync(file, { force: true });
    copyFileSync(copy, path);
    const afterBackup = endpoint.requests.length;
    const restored = openSqliteStore(path);
    cleanups.push(() => restored.close());
    const resumed = spawnWorker(path, { env: WORKER_ENV, cleanups });
    await untilAllSuccessful(restored);
    await stopped(resumed);

    const resent = endpoint.requests.slice(afterBackup).map((r) => r.headers["webhook-id"] ?? "");
    expect(resent.filter((id) => recordedSent.has(id))).toEqual([]);
    const received = new Set(endpoint.requests.map((r) => r.headers["webhook-id"] ?? ""));
    expect([...everyMessage].filter((id) => !received.has(id))).toEqual([]);
  });

  test("an existing file is left as it was, and the command exits 2", async () => {
    const dir = tempDir();
    const path = join(dir, "app.db");
    openSqliteStore(path).close();
    const existing = join(dir, "keep.db");
    writeFileSync(existing, "mine");
    const { code, stderr, stdout } = await backup(path, existing);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toBe(
      `error: Cannot back up: ${existing} exists: give a new file name (a backup never replaces one)\n`,
    );
    expect(readFileSync(existing, "utf8")).toBe("mine");
  });

  test("PostgreSQL is pointed at pg_dump, with exit 2", async () => {
    const { code, stderr } = await backup("postgres://hooks:secret@127.0.0.1:1/inventory", "x.db");
    expect(code).toBe(2);
    expect(stderr).toContain("back it up with pg_dump");
    expect(stderr).not.toContain("secret");
  });
});
