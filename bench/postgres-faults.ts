/**
 * bench:pg-faults: PostgreSQL faults as a worker fleet sees them, on a throwaway cluster.
 * 1. Recovery: 3 idle worker processes, the database stopped for OUTAGE seconds, then started;
 *    time from the server accepting connections again to the first delivery of work queued then.
 * 2. Connection budget: deliveries per second of one worker process by DATABASE_POOL_MAX, and
 *    the connections it holds (pg_stat_activity).
 * Env: BENCH_OUTAGES="2,10,35" (seconds), BENCH_DELIVERIES=3000, BENCH_LOG=1 (workers' logs).
 */
import { join } from "node:path";
import { SQL, type Subprocess } from "bun";
import { openPostgresStore } from "../lib/store/postgres/store.ts";
import {
  postgresUnavailableReason,
  startPostgresCluster,
} from "../tests/fakes/postgres-cluster.ts";
import { benchChange } from "./shared.ts";
import { startSink } from "./sink.ts";

const WORKER = join(import.meta.dir, "..", "scripts", "worker.ts");
const outages = (process.env.BENCH_OUTAGES ?? "2,10,35").split(",").map(Number);
const deliveries = Number(process.env.BENCH_DELIVERIES ?? 3000);

function startWorker(url: string, env: Record<string, string> = {}): Subprocess {
  return Bun.spawn(["bun", WORKER], {
    env: { ...process.env, DATABASE_URL: url, WEBHOOK_ALLOWED_HOSTS: "127.0.0.1", ...env },
    stdin: "ignore",
    stdout: "ignore",
    stderr: process.env.BENCH_LOG ? "inherit" : "ignore",
  });
}

async function stopAll(workers: Subprocess[]): Promise<void> {
  for (const worker of workers) worker.kill("SIGTERM");
  await Promise.all(workers.map((worker) => worker.exited));
}

/** Polls `read` (other processes do the work) until `ok`, for at most `limitMs`. */
async function until(read: () => Promise<number>, ok: (n: number) => boolean, limitMs: number) {
  const deadline = performance.now() + limitMs;
  for (;;) {
    const value = await read();
    if (ok(value) || performance.now() > deadline) return value;
    await Bun.sleep(5); // a benchmark, not a test: polling other processes' progress
  }
}

const reason = postgresUnavailableReason();
if (reason) {
  console.log(`[skip] PostgreSQL benchmarks: ${reason}`);
} else {
  await using cluster = await startPostgresCluster();
  const sink = await startSink();
  try {
    console.log("Recovery after a stopped database (3 idle workers)");
    for (const seconds of outages) {
      const url = await cluster.createDatabase();
      const store = await openPostgresStore(url);
      await store.webhooks.create({ name: "sink", url: `${sink.url}/hook` });
      await sink.reset();
      const workers = [startWorker(url), startWorker(url), startWorker(url)];
      await store.queue.enqueue(benchChange(0));
      await until(
        async () => (await sink.stats()).count,
        (n) => n >= 1,
        30_000,
      );
      await sink.reset();
      await cluster.stopServer();
      await Bun.sleep(seconds * 1000);
      await cluster.startServer();
      const back = performance.now();
      if (process.env.BENCH_LOG) console.log(`-- back at ${new Date().toISOString()}`);
      await store.queue.enqueue(benchChange(1));
      const queued = performance.now();
      const seen = await until(
        async () => (await sink.stats()).count,
        (n) => n >= 1,
        60_000,
      );
      const ms = performance.now() - back;
      const enqueueMs = queued - back;
      await stopAll(workers);
      await store.close();
      console.log(
        `  outage ${String(seconds).padStart(3)} s: first delivery ${seen >= 1 ? `${(ms / 1000).toFixed(2)} s` : "none within 60 s"} after the database was back (the enqueue itself took ${(enqueueMs / 1000).toFixed(2)} s)`,
      );
    }

    console.log(`Connection budget: one worker, ${deliveries} deliveries`);
    for (const budget of [2, 4, 11]) {
      const url = await cluster.createDatabase();
      const store = await openPostgresStore(url);
      await store.webhooks.create({ name: "sink", url: `${sink.url}/hook` });
      await store.queue.enqueueMany(Array.from({ length: deliveries }, (_, i) => benchChange(i)));
      await sink.reset();
      const started = performance.now();
      const worker = startWorker(url, {
        DATABASE_POOL_MAX: String(budget),
        WEBHOOK_CONCURRENCY: "32",
      });
      await until(
        async () => (await sink.stats()).count,
        (n) => n >= deliveries,
        120_000,
      );
      const seconds = (performance.now() - started) / 1000;
      const admin = new SQL(url, { max: 1 });
      const database = new URL(url).pathname.slice(1);
      const [row] = await admin<Array<{ n: number }>>`
        SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = ${database} AND pid <> pg_backend_pid()`;
      await admin.close();
      await stopAll([worker]);
      await store.close();
      // The store opened above holds its own connections: those of this process, not the worker.
      console.log(
        `  DATABASE_POOL_MAX=${String(budget).padEnd(2)}: ${Math.round(deliveries / seconds)} deliveries/s (start-up included), ${row?.n ?? "?"} connections to the database (the benchmark's own up to 4 included)`,
      );
    }
  } finally {
    await sink.stop();
  }
}
