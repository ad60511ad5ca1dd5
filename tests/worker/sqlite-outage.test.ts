import { Database } from "bun:sqlite";
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import type { Store } from "../../lib/webhooks/ports.ts";
import { change } from "../fakes/change.ts";
import { databaseFileAndEndpoint } from "../fakes/database-file.ts";
import { spawnWorker } from "../fakes/worker-process.ts";

// Worker processes, and outages longer than a lease and than busy_timeout (5 s).
setDefaultTimeout(150_000);

const ROOT = join(import.meta.dir, "..", "..");
const STOPPED_WORKER = join(import.meta.dir, "..", "fakes", "stopped-sqlite-worker.ts");
const TOTAL = 480;
/**
 * Short leases, so an outage outlasts them, yet longer than the loop's longest pause between
 * tries to write a result (5 s): the grace after the return is one lease. Beats every second.
 */
const WORKER_ENV = {
  WEBHOOK_CONCURRENCY: "4",
  WEBHOOK_TIMEOUT_MS: "1000",
  WEBHOOK_LEASE_MS: "6000",
  WORKER_HEARTBEAT_MS: "1000",
};
/** Longer than the lease and than the workers' busy_timeout: their writes fail meanwhile. */
const OUTAGE_MS = 8000;

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup() {
  // Answers after 100 ms, so 12 requests in flight take a few seconds for all: the outage falls
  // in the middle of the work.
  const env = databaseFileAndEndpoint(
    async () => {
      await new Promise((resolve) => setTimeout(resolve, 100));
      return new Response("ok");
    },
    { cleanups, prefix: "sqlite-outage-" },
  );
  await env.store.webhooks.create({ name: "hook", url: `${env.endpoint.url}/in` });
  await env.store.queue.enqueueMany(Array.from({ length: TOTAL }, () => change()));
  return env;
}

function startWorker(path: string) {
  return spawnWorker(path, { env: WORKER_ENV, cleanups });
}

/**
 * The outage itself: its length is what these tests are about (longer than a lease), so it is
 * a span of real time, not a wait for an event.
 */
function outage(ms: number): Promise<void> {
  return Bun.sleep(ms);
}

/** Polls the database (the workers are other processes) until everything is successful. */
async function untilAllSuccessful(store: Store): Promise<void> {
  const deadline = performance.now() + 60_000;
  while ((await store.queue.stats()).successful < TOTAL && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Whether process `pid` is stopped (state T in /proc). */
function stoppedState(pid: number): boolean {
  try {
    return /^\d+ \(.*\) T /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

/** Whether another connection holds the write lock: a write that may not wait fails. */
function lockHeld(path: string): boolean {
  const probe = new Database(path);
  try {
    probe.run("PRAGMA busy_timeout = 0");
    probe.run("BEGIN IMMEDIATE");
    probe.run("COMMIT");
    return false;
  } catch {
    return true;
  } finally {
    probe.close();
  }
}

/** Leases that had run out by the end of the outage, held by workers that were alive. */
function expiredLeases(path: string): number {
  const reader = new Database(path, { readonly: true });
  try {
    const row = reader
      .query<{ n: number }, [number]>(
        "SELECT count(*) AS n FROM deliveries WHERE state = 'delivering' AND lease_expires_at < ?",
      )
      .get(Date.now());
    return row?.n ?? 0;
  } finally {
    reader.close();
  }
}

/**
 * A worker that did not see the outage claims the moment it ends, before anyone has written: it
 * takes no lease of a live worker over (each claim is a first attempt), and gives its claims back.
 */
async function claimAsNewcomer(store: Store): Promise<void> {
  const claims = await store.queue.claim({
    workerId: "newcomer",
    limit: TOTAL,
    leaseMs: 6000,
    now: Date.now(),
  });
  expect(claims.filter((claim) => claim.attempt > 1)).toEqual([]);
  await store.queue.release(claims);
}

async function expectEachSentOnceAndSuccessful(
  env: Awaited<ReturnType<typeof setup>>,
  workers: Subprocess[],
) {
  await untilAllSuccessful(env.store);
  for (const worker of workers) worker.kill("SIGTERM");
  expect(await Promise.all(workers.map((worker) => worker.exited))).toEqual(workers.map(() => 0));
  expect(await env.store.queue.stats()).toMatchObject({ successful: TOTAL, delivering: 0 });
  const ids = env.endpoint.requests.map((request) => request.headers["webhook-id"]);
  expect(new Set(ids).size).toBe(TOTAL);
  expect(ids).toHaveLength(TOTAL);
}

describe("SQLite workers through an outage longer than the lease", () => {
  test("the write lock held by another process: results are held and written, nothing is sent twice", async () => {
    const env = await setup();
    const workers = [startWorker(env.path), startWorker(env.path), startWorker(env.path)];
    await env.endpoint.waitForRequests(24);

    // Another process takes the write lock (a backup, a stuck tool): every write waits, then fails.
    const holder = new Database(env.path);
    holder.run("PRAGMA busy_timeout = 5000");
    holder.run("BEGIN IMMEDIATE");
    try {
      await outage(OUTAGE_MS);
      // The case at hand: leases of live workers ran out while they could not write.
      expect(expiredLeases(env.path)).toBeGreaterThan(0);
    } finally {
      holder.run("ROLLBACK");
      holder.close();
    }
    await claimAsNewcomer(env.store);
    await expectEachSentOnceAndSuccessful(env, workers);
  });

  test("a worker stopped (SIGSTOP) while it holds the write lock: its results and the others' are written, nothing is sent twice", async () => {
    const env = await setup();
    const workers = [startWorker(env.path), startWorker(env.path), startWorker(env.path)];
    await env.endpoint.waitForRequests(24);

    // A worker that sent what it claimed and stops itself inside a write transaction.
    const stopped = Bun.spawn(
      ["bun", STOPPED_WORKER, env.path, `${env.endpoint.url}/in`, "4", WORKER_ENV.WEBHOOK_LEASE_MS],
      { cwd: ROOT, stdin: "ignore", stdout: "pipe", stderr: "inherit" },
    );
    cleanups.push(async () => {
      stopped.kill("SIGCONT");
      stopped.kill("SIGKILL");
      await stopped.exited;
    });
    const lines = stopped.stdout.pipeThrough(new TextDecoderStream()).getReader();
    const first = await lines.read();
    expect(JSON.parse(first.value ?? "{}")).toEqual({ claimed: 4 });
    // Stopped holding the lock: its state is T and nobody else can write.
    for (let i = 0; i < 500 && !stoppedState(stopped.pid); i++) await Bun.sleep(10);
    expect(stoppedState(stopped.pid)).toBe(true);
    expect(lockHeld(env.path)).toBe(true);
    try {
      await outage(OUTAGE_MS);
      expect(expiredLeases(env.path)).toBeGreaterThan(0);
    } finally {
      stopped.kill("SIGCONT");
    }
    let output = "";
    for (let read = await lines.read(); !read.done; read = await lines.read()) output += read.value;
    expect(await stopped.exited).toBe(0);
    // Its leases had run out while it was stopped; nobody took them over meanwhile.
    expect(JSON.parse(output)).toEqual({ applied: [true, true, true, true] });
    await expectEachSentOnceAndSuccessful(env, workers);
  });
});
