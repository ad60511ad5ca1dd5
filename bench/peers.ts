/**
 * bench:webhooks section: this project's worker side by side with other job queues doing the
 * same work on the same endpoint in one run: N jobs, each one POST of the same JSON body to a
 * sink process on loopback, 64 in flight. BullMQ on Redis (Debian's redis-server, started
 * here), pg-boss and graphile-worker on the same throwaway PostgreSQL as our PostgreSQL worker.
 * A peer whose server is missing is skipped with a notice. The peers run in this process (their
 * workers are libraries); ours is a worker process. A raw fetch loop in this process is the
 * ceiling. Figures are deliveries per second from the first request to the last. The SQLite
 * worker, its flat loop, raw fetch and BullMQ run side by side in rounds (BENCH_PEER_ROUNDS, 3):
 * each ratio is taken within a round and the median of the rounds reported, beside what the
 * queue's SQL costs per delivery.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { openPostgresStore } from "../lib/store/postgres/store.ts";
import { openSqliteStore } from "../lib/store/sqlite/store.ts";
import type { Store } from "../lib/webhooks/ports.ts";
import {
  postgresUnavailableReason,
  startPostgresCluster,
} from "../tests/fakes/postgres-cluster.ts";
import { layerCostPerDelivery } from "./loop-layers.ts";
import { benchChange, enqueueBench, median } from "./shared.ts";
import { type Sink, startSink } from "./sink.ts";
import { sqlCostPerDelivery } from "./sql-cost.ts";

export const PEERS_TITLE =
  "Side by side on one endpoint: worker (SQLite, PostgreSQL), raw fetch, BullMQ, pg-boss, graphile-worker";

type Report = (label: string, value: string, note?: string) => void;

export const WORKER_SCRIPT = join(import.meta.dir, "..", "scripts", "worker.ts");
export const FLAT_LOOP_SCRIPT = join(import.meta.dir, "flat-loop.ts");
const BODY = JSON.stringify({ event: "updated", data: benchChange(0).data });

export async function peersSection(options: {
  jobs: number;
  concurrency: number;
  /** Side-by-side rounds of the SQLite worker, its flat loop, raw fetch and BullMQ (medians). */
  rounds?: number;
  report: Report;
  print: (line: string) => void;
}): Promise<void> {
  const { jobs, concurrency, report, print } = options;
  const rounds = options.rounds ?? 3;
  const sink = await startSink();
  const scratch = mkdtempSync(join(tmpdir(), "bench-peers-"));
  const pgReason = postgresUnavailableReason();
  const cluster = pgReason ? null : await startPostgresCluster({ settings: PG_SETTINGS });
  const redisReason = Bun.which("redis-server") ? null : "redis-server is not installed";
  const redis = redisReason ? null : await startRedis();
  const run = async (
    figures: Map<string, number>,
    label: string,
    skipped: string | null,
    fn: () => Promise<number>,
  ) => {
    if (skipped) {
      print(`  ${label}: skipped (${skipped})`);
      return;
    }
    await sink.reset();
    const rate = await fn();
    const { steady } = await sink.stats();
    figures.set(label, rate);
    figures.set(steadyOf(label), steady);
    report(
      label,
      `${Math.round(rate).toLocaleString("en")}/s`,
      `${jobs} POSTs, ${concurrency} in flight; steady (20–90 % of arrivals) ${Math.round(steady).toLocaleString("en")}/s`,
    );
  };
  try {
    print(`  sink: ${sink.url} (a process of its own), body ${BODY.length} bytes`);
    const perRound: Array<Map<string, number>> = [];
    for (let round = 1; round <= rounds; round++) {
      print(`  round ${round} of ${rounds}`);
      const figures = new Map<string, number>();
      perRound.push(figures);
      await run(figures, RAW, null, () => rawFetch(sink.url, jobs, concurrency));
      await run(figures, SQLITE, null, async () => {
        const path = join(scratch, `peers-${round}.db`);
        return ourWorker(openSqliteStore(path), path, sink, jobs, concurrency);
      });
      await run(figures, FLAT, null, async () => {
        const path = join(scratch, `flat-${round}.db`);
        return flatLoop(openSqliteStore(path), path, sink, jobs, concurrency);
      });
      await run(figures, BULL, redisReason, () =>
        bullmq(redis?.port ?? 0, sink, jobs, concurrency),
      );
    }
    const postgres = new Map<string, number>();
    await run(postgres, "worker, PostgreSQL", pgReason, async () => {
      const url = (await cluster?.createDatabase()) ?? "";
      return ourWorker(await openPostgresStore(url), url, sink, jobs, concurrency);
    });
    await run(postgres, "graphile-worker (PostgreSQL)", pgReason, async () =>
      graphile((await cluster?.createDatabase()) ?? "", sink, jobs, concurrency),
    );
    await run(postgres, "pg-boss (PostgreSQL)", pgReason, async () =>
      pgBoss((await cluster?.createDatabase()) ?? "", sink, jobs, concurrency),
    );
    // Each ratio twice: over the whole run (first arrival to last), and steady (20–90 % of the
    // arrivals), which leaves out the warm-up: at 20,000 jobs the JIT's first compilations of
    // the hot path weigh on a third of a run, and a worker runs for days.
    const ratio = (label: string, of: string, over: string, note: string) => {
      for (const steady of [false, true]) {
        const key = (name: string) => (steady ? steadyOf(name) : name);
        const values = perRound.map(
          (f) => (f.get(key(of)) ?? 0) / (f.get(key(over)) ?? Number.NaN),
        );
        if (values.some((value) => !Number.isFinite(value))) return;
        const each = values.map((value) => value.toFixed(2)).join(", ");
        report(
          steady ? "  … steady" : label,
          median(values).toFixed(2),
          steady ? `median of ${each}` : `median of ${each}; ${note}`,
        );
      }
    };
    const sql = await sqlCostPerDelivery(Math.min(jobs, 20_000));
    const layers = await layerCostPerDelivery(Math.min(jobs, 20_000));
    const sqlNote = `SQL ${sql.totalUs.toFixed(1)} µs per delivery`;
    ratio("worker (SQLite) / raw fetch", SQLITE, RAW, `target ≥ 0.55; ${sqlNote}`);
    ratio("flat loop (SQLite) / raw fetch", FLAT, RAW, "the floor of this SQL and request shape");
    ratio(
      "worker (SQLite) / flat loop",
      SQLITE,
      FLAT,
      "target ≥ 0.95: what the worker's layers cost",
    );
    ratio("worker (SQLite) / BullMQ", SQLITE, BULL, "target ≥ 2.0");
    report(
      "SQL per delivery (SQLite, no HTTP)",
      `${sql.totalUs.toFixed(1)} µs`,
      `claim ${sql.claimUs.toFixed(1)} + results ${sql.resultsUs.toFixed(1)} (64 per commit)`,
    );
    report(
      "the worker's layers, in process",
      `${layers.layersUs.toFixed(1)} µs`,
      `CPU per delivery over the flat loop's ${layers.flatUs.toFixed(1)} µs (in-memory SQLite, fetch answered at once, median of 5)`,
    );
    const pg = postgres.get("worker, PostgreSQL");
    const graphileRate = postgres.get("graphile-worker (PostgreSQL)");
    const boss = postgres.get("pg-boss (PostgreSQL)");
    if (pg && graphileRate)
      report("worker (PostgreSQL) / graphile-worker", (pg / graphileRate).toFixed(2));
    if (pg && boss) report("worker (PostgreSQL) / pg-boss", (pg / boss).toFixed(2));
  } finally {
    await sink.stop();
    redis?.process.kill("SIGTERM");
    await redis?.process.exited;
    await cluster?.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

const RAW = "raw fetch loop";
const steadyOf = (label: string) => `${label} (steady)`;
const SQLITE = "worker, SQLite";
const FLAT = "flat loop, SQLite (same SQL and request)";
const BULL = "BullMQ (Redis)";

/** Closest to SQLite's WAL + synchronous=NORMAL: durable on disk, commits not waiting for fsync. */
const PG_SETTINGS = { fsync: "on", full_page_writes: "on", synchronous_commit: "off" };

/** Requests per second from the sink's first to its last arrival. */
export async function rateOf(sink: Sink, jobs: number): Promise<number> {
  const stats = await sink.stats();
  if (stats.count < jobs) throw new Error(`only ${stats.count} of ${jobs} requests arrived`);
  return (stats.count / (stats.last - stats.first)) * 1000;
}

export async function rawFetch(url: string, jobs: number, concurrency: number): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < jobs) {
        next++;
        const response = await fetch(`${url}/raw`, {
          method: "POST",
          body: BODY,
          headers: { "content-type": "application/json" },
        });
        await response.arrayBuffer();
      }
    }),
  );
  return (jobs / (performance.now() - started)) * 1000;
}

/** Our worker process with --once on a store holding `jobs` deliveries for the sink. */
export async function ourWorker(
  store: Store,
  database: string,
  sink: Sink,
  jobs: number,
  concurrency: number,
): Promise<number> {
  await fillStore(store, sink, jobs);
  const worker = Bun.spawn(["bun", WORKER_SCRIPT, "--once"], {
    env: benchWorkerEnv(database, concurrency),
    stdout: "ignore",
    stderr: "pipe",
  });
  return rateOfProcess(worker, sink, jobs);
}

/** bench/flat-loop.ts, a process of its own like the worker, on the same kind of store. */
export async function flatLoop(
  store: Store,
  database: string,
  sink: Sink,
  jobs: number,
  concurrency: number,
): Promise<number> {
  await fillStore(store, sink, jobs);
  const loop = Bun.spawn(["bun", FLAT_LOOP_SCRIPT, database, String(concurrency)], {
    stdout: "ignore",
    stderr: "pipe",
  });
  return rateOfProcess(loop, sink, jobs);
}

async function rateOfProcess(
  child: Subprocess<"ignore", "ignore", "pipe">,
  sink: Sink,
  jobs: number,
): Promise<number> {
  const code = await child.exited;
  if (code !== 0)
    throw new Error(`${child.pid} exited ${code}: ${await new Response(child.stderr).text()}`);
  return rateOf(sink, jobs);
}

/** The worker's environment in the benches: this database, everything sent once, to loopback. */
export function benchWorkerEnv(
  database: string,
  concurrency: number,
): Record<string, string | undefined> {
  return {
    ...process.env,
    DATABASE_URL: database,
    WEBHOOK_ALLOWED_HOSTS: "127.0.0.1",
    WEBHOOK_CONCURRENCY: String(concurrency),
    WEBHOOK_MAX_ATTEMPTS: "1",
  };
}

/** One webhook for the sink and `jobs` deliveries queued for it; the store is closed after. */
export async function fillStore(store: Store, sink: Sink, jobs: number): Promise<void> {
  try {
    await store.webhooks.create({ name: "sink", url: `${sink.url}/hook` });
    await enqueueBench(store, jobs);
  } finally {
    await store.close();
  }
}

export async function bullmq(port: number, sink: Sink, jobs: number, concurrency: number) {
  const { Queue, Worker } = await import("bullmq");
  const connection = { host: "127.0.0.1", port };
  const queue = new Queue("bench", { connection });
  for (let done = 0; done < jobs; done += 1000) {
    const size = Math.min(1000, jobs - done);
    await queue.addBulk(
      Array.from({ length: size }, (_, i) => ({
        name: "post",
        data: { n: done + i, body: BODY },
        opts: { removeOnComplete: true, removeOnFail: true },
      })),
    );
  }
  let finished = 0;
  const allDone = Promise.withResolvers<void>();
  const worker = new Worker(
    "bench",
    async (job) => {
      const response = await fetch(`${sink.url}/bullmq`, {
        method: "POST",
        body: job.data.body,
        headers: { "content-type": "application/json" },
      });
      await response.arrayBuffer();
    },
    { connection, concurrency },
  );
  worker.on("completed", () => {
    if (++finished === jobs) allDone.resolve();
  });
  try {
    await allDone.promise;
    return await rateOf(sink, jobs);
  } finally {
    await worker.close();
    await queue.obliterate({ force: true }).catch(() => {});
    await queue.close();
  }
}

async function graphile(url: string, sink: Sink, jobs: number, concurrency: number) {
  const { makeWorkerUtils, run } = await import("graphile-worker");
  const utils = await makeWorkerUtils({ connectionString: url });
  await utils.migrate();
  for (let done = 0; done < jobs; done += 1000) {
    const size = Math.min(1000, jobs - done);
    await utils.addJobs(
      Array.from({ length: size }, (_, i) => ({ identifier: "post", payload: { n: done + i } })),
    );
  }
  await utils.release();
  let finished = 0;
  const allDone = Promise.withResolvers<void>();
  const runner = await run({
    connectionString: url,
    concurrency,
    noHandleSignals: true,
    pollInterval: 1000,
    logger: quietGraphileLogger(await import("graphile-worker")),
    taskList: {
      post: async () => {
        const response = await fetch(`${sink.url}/graphile`, {
          method: "POST",
          body: BODY,
          headers: { "content-type": "application/json" },
        });
        await response.arrayBuffer();
      },
    },
  });
  runner.events.on("job:success", () => {
    if (++finished === jobs) allDone.resolve();
  });
  try {
    await allDone.promise;
    return await rateOf(sink, jobs);
  } finally {
    await runner.stop();
  }
}

function quietGraphileLogger(graphile: typeof import("graphile-worker")) {
  return new graphile.Logger(() => () => {});
}

/** pg-boss's best configuration here: batches of 64 per fetch, fetching again while full. */
async function pgBoss(url: string, sink: Sink, jobs: number, concurrency: number) {
  const { PgBoss } = (await import("pg-boss")) as unknown as {
    PgBoss: new (url: string) => PgBossLike;
  };
  const boss = new PgBoss(url);
  boss.on("error", () => {});
  await boss.start();
  await boss.createQueue("bench");
  for (let done = 0; done < jobs; done += 1000) {
    const size = Math.min(1000, jobs - done);
    await boss.insert(
      "bench",
      Array.from({ length: size }, (_, i) => ({ data: { n: done + i } })),
    );
  }
  let finished = 0;
  const allDone = Promise.withResolvers<void>();
  await boss.work(
    "bench",
    { batchSize: concurrency, pollingIntervalSeconds: 0.5, burstWhenBatchFull: true },
    async (batch: unknown[]) => {
      await Promise.all(
        batch.map(async () => {
          const response = await fetch(`${sink.url}/pgboss`, {
            method: "POST",
            body: BODY,
            headers: { "content-type": "application/json" },
          });
          await response.arrayBuffer();
        }),
      );
      finished += batch.length;
      if (finished >= jobs) allDone.resolve();
    },
  );
  try {
    await allDone.promise;
    return await rateOf(sink, jobs);
  } finally {
    await boss.stop({ graceful: false, wait: false }).catch(() => {});
  }
}

interface PgBossLike {
  on(event: "error", fn: (error: unknown) => void): void;
  start(): Promise<unknown>;
  stop(options: { graceful: boolean; wait: boolean }): Promise<void>;
  createQueue(name: string): Promise<void>;
  insert(name: string, jobs: Array<{ data: unknown }>): Promise<unknown>;
  work(name: string, options: object, handler: (jobs: unknown[]) => Promise<void>): Promise<string>;
}

/** redis-server on a free loopback port, nothing saved to disk. */
export async function startRedis(): Promise<{ port: number; process: Subprocess }> {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  const child = Bun.spawn(
    [
      "redis-server",
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "no",
    ],
    { stdout: "pipe", stderr: "inherit" },
  );
  const reader = child.stdout.getReader();
  let text = "";
  while (!text.includes("Ready to accept connections")) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`redis-server exited: ${text}`);
    text += new TextDecoder().decode(value);
  }
  void (async () => {
    while (!(await reader.read()).done) {}
  })();
  return { port, process: child };
}
