import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { SQL, type Subprocess } from "bun";
import { createMemoryLogger, type Logger } from "../../lib/log.ts";
import { openPostgresStore } from "../../lib/store/postgres/store.ts";
import { createDeliveryWorker } from "../../lib/worker/bind.ts";
import { loadWorkerConfig } from "../../lib/worker/config.ts";
import {
  describePostgres,
  type PostgresCluster,
  startPostgresCluster,
} from "../fakes/postgres-cluster.ts";
import { startFakeEndpoint } from "../fakes/webhook-endpoint.ts";
import { change } from "../store/contract.ts";

const WORKER_SCRIPT = join(import.meta.dir, "../../scripts/worker.ts");

/** A worker process whose stderr is read as it comes, so a test can await a line. */
interface WorkerProcess {
  child: Subprocess<"ignore", "ignore", "pipe">;
  readonly log: string;
  untilLogged(pattern: RegExp): Promise<void>;
}

/** Workers and the database failing under them. A cluster of its own: these tests kill it. */
describePostgres("workers through PostgreSQL faults", () => {
  let cluster: PostgresCluster;
  let admin: SQL;
  const cleanups: Array<() => Promise<unknown>> = [];

  beforeAll(async () => {
    cluster = await startPostgresCluster();
  });
  afterAll(async () => {
    await cluster?.stop();
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  function adminOn(url: string): SQL {
    admin = new SQL(url, { max: 1 });
    cleanups.push(() => admin.close());
    return admin;
  }

  function startWorker(databaseUrl: string, env: Record<string, string> = {}): WorkerProcess {
    const child = Bun.spawn([process.execPath, WORKER_SCRIPT], {
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        WEBHOOK_ALLOWED_HOSTS: "127.0.0.1",
        WEBHOOK_CONCURRENCY: "4",
        ...env,
      },
      stdin: "ignore",
      stdout: "ignore",
      stderr: "pipe",
    });
    let log = "";
    const waiters: Array<{ pattern: RegExp; resolve: () => void }> = [];
    const reading = (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of child.stderr) {
        log += decoder.decode(chunk, { stream: true });
        for (const waiter of [...waiters]) {
          if (!waiter.pattern.test(log)) continue;
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve();
        }
      }
    })();
    cleanups.push(async () => {
      child.kill("SIGKILL");
      await child.exited;
      await reading;
    });
    return {
      child,
      get log() {
        return log;
      },
      untilLogged(pattern) {
        if (pattern.test(log)) return Promise.resolve();
        return new Promise((resolve) => waiters.push({ pattern, resolve }));
      },
    };
  }

  /** Polls the server (the workers are other processes) for at most 20 s until `ok`. */
  async function until(read: () => Promise<number>, ok: (n: number) => boolean): Promise<number> {
    const deadline = performance.now() + 20_000;
    for (;;) {
      const value = await read();
      if (ok(value) || performance.now() > deadline) return value;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  test("a storm of terminated backends against idle workers: none dies, all deliver after", async () => {
    const endpoint = startFakeEndpoint();
    cleanups.push(() => endpoint.stop());
    const url = await cluster.createDatabase();
    const store = await openPostgresStore(url);
    cleanups.push(() => store.close());
    await store.webhooks.create({ name: "hook", url: `${endpoint.url}/hook` });
    const sql = adminOn(url);
    const database = new URL(url).pathname.slice(1);
    const listeners = () =>
      sql<Array<{ n: number }>>`
        SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = ${database} AND query ILIKE 'LISTEN%'`.then(([row]) => row?.n ?? 0);

    const workers = [startWorker(url), startWorker(url), startWorker(url)];
    await Promise.all(workers.map((worker) => worker.untilLogged(/started/)));
    expect(await until(listeners, (n) => n === 3)).toBe(3);

    // Every backend of the database, again and again: the workers' pooled connections while they
    // sleep, their LISTEN connections, and those they open to recover. A NOTIFY in between makes
    // the idle ones look for work on connections that are about to be cut.
    for (let round = 0; round < 40; round++) {
      await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE datname = ${database} AND pid <> pg_backend_pid()`;
      await sql`SELECT pg_notify('webhook_deliveries', '')`;
      if (round % 10 === 9) await until(listeners, (n) => n === 3);
    }
    expect(workers.map((worker) => worker.child.exitCode)).toEqual([null, null, null]);

    for (let i = 0; i < 30; i++) await store.queue.enqueue(change());
    const died = workers.map(async (worker) => {
      const code = await worker.child.exited;
      throw new Error(`A worker exited with ${code}: ${worker.log.slice(-1500)}`);
    });
    await Promise.race([endpoint.waitForRequests(30), ...died]);
    for (const worker of workers) worker.child.kill("SIGTERM");
    for (const death of died) death.catch(() => {});
    expect(await Promise.all(workers.map((worker) => worker.child.exited))).toEqual([0, 0, 0]);
    expect((await store.queue.stats()).successful).toBe(30);
    expect(new Set(endpoint.requests.map((r) => r.headers["webhook-id"])).size).toBe(30);
    for (const worker of workers) {
      expect(worker.log).not.toContain("    at "); // no stack trace
      // Outages are reported, not each failed call.
      expect(worker.log).not.toMatch(/Worker (claim|wait) failed/);
    }
  }, 60_000);

  test("after a stopped database, delivery resumes when it is back, not when the backoff ends", async () => {
    const endpoint = startFakeEndpoint();
    cleanups.push(() => endpoint.stop());
    const url = await cluster.createDatabase();
    const lines = createMemoryLogger();
    let unreachable = () => {};
    const reported = new Promise<void>((resolve) => {
      unreachable = resolve;
    });
    const logger = {
      ...lines,
      warn: (message: string) => {
        lines.warn(message);
        if (message.startsWith("Database unreachable")) unreachable();
      },
    } as unknown as Logger;
    const store = await openPostgresStore(url, { logger });
    cleanups.push(() => store.close());
    await store.webhooks.create({ name: "hook", url: `${endpoint.url}/hook` });

    let claimFailed = () => {};
    const failedClaim = new Promise<void>((resolve) => {
      claimFailed = resolve;
    });
    const worker = createDeliveryWorker({
      store,
      config: loadWorkerConfig({ DATABASE_URL: url, WEBHOOK_ALLOWED_HOSTS: "127.0.0.1" }),
      logger,
      // A failed claim would pause the loop for ten minutes: only the database's return ends it.
      claimErrorDelayMs: 600_000,
      hooks: {
        onError: (_error, { phase }) => {
          if (phase === "claim") claimFailed();
        },
      },
    });
    const stop = new AbortController();
    const running = worker.run({ signal: stop.signal });
    cleanups.push(async () => {
      stop.abort();
      await running;
    });

    await cluster.stopServer();
    try {
      await reported;
      await failedClaim;
    } finally {
      await cluster.startServer();
    }
    await store.queue.enqueue(change());
    await endpoint.waitForRequests(1);
    stop.abort();
    await running;

    expect(lines.lines.filter((line) => line.includes("Database unreachable"))).toHaveLength(1);
    expect(lines.lines.filter((line) => /Database back after \d+\.\d s/.test(line))).toHaveLength(
      1,
    );
    expect(lines.lines.filter((line) => /Worker (claim|wait) failed/.test(line))).toEqual([]);
  }, 60_000);
});
