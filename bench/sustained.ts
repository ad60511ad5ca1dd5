/**
 * bench:webhooks section `sustained`: speed as a worker runs for hours, not one second. The
 * 20,000 deliveries of `peers` last about a second, mostly the JIT warming up (the cold-start
 * row); here each side delivers BENCH_SUSTAINED_COUNT (200,000) POSTs to the same sink, 64 in
 * flight, in side-by-side rounds (BENCH_PEER_ROUNDS, 3): a raw fetch loop, the worker (SQLite),
 * its flat loop (bench/flat-loop.ts) and BullMQ on Redis (skipped with a notice when
 * redis-server is missing). Each ratio is taken within a round; the median of the rounds is
 * reported. Then the worker, left running, is fed at half its sustained rate for
 * BENCH_SUSTAINED_LATENCY_SECONDS (20) and the time from enqueue to arrival is reported
 * (p50, p99): what a user waits for a change under a steady load.
 */
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStore } from "../lib/store/sqlite/store.ts";
import {
  benchWorkerEnv,
  bullmq,
  flatLoop,
  ourWorker,
  rawFetch,
  startRedis,
  WORKER_SCRIPT,
} from "./peers.ts";
import { benchChange, median } from "./shared.ts";
import { preciseNow, type Sink, startSink } from "./sink.ts";

export const SUSTAINED_TITLE =
  "Sustained: worker (SQLite) beside raw fetch, its flat loop and BullMQ, then latency at half its rate";

type Report = (label: string, value: string, note?: string) => void;

const RAW = "raw fetch loop";
const WORKER = "worker, SQLite";
const FLAT = "flat loop, SQLite";
const BULL = "BullMQ (Redis)";

export async function sustainedSection(options: {
  count: number;
  concurrency: number;
  rounds: number;
  latencySeconds: number;
  /** Changes per second fed for the latency; absent: half the worker's median rate. */
  latencyRate?: number;
  report: Report;
  print: (line: string) => void;
}): Promise<void> {
  const { count, concurrency, rounds, report, print } = options;
  const sink = await startSink();
  const scratch = mkdtempSync(join(tmpdir(), "bench-sustained-"));
  const redisReason = Bun.which("redis-server") ? null : "redis-server is not installed";
  const redis = redisReason ? null : await startRedis();
  const perRound: Array<Map<string, number>> = [];
  try {
    for (let round = 1; round <= rounds; round++) {
      print(`  round ${round} of ${rounds}`);
      const figures = new Map<string, number>();
      perRound.push(figures);
      const run = async (label: string, fn: () => Promise<number>) => {
        await sink.reset();
        const rate = await fn();
        figures.set(label, rate);
        report(
          label,
          perSecond(rate),
          `${count.toLocaleString("en")} POSTs, ${concurrency} in flight`,
        );
      };
      await run(RAW, () => rawFetch(sink.url, count, concurrency));
      await run(WORKER, () => {
        const path = join(scratch, `worker-${round}.db`);
        return ourWorker(openSqliteStore(path), path, sink, count, concurrency);
      });
      await run(FLAT, () => {
        const path = join(scratch, `flat-${round}.db`);
        return flatLoop(openSqliteStore(path), path, sink, count, concurrency);
      });
      if (redis) await run(BULL, () => bullmq(redis.port, sink, count, concurrency));
      else print(`  ${BULL}: skipped (${redisReason})`);
    }
    const ratio = (label: string, of: string, over: string, note: string) => {
      const values = perRound.map((f) => (f.get(of) ?? 0) / (f.get(over) ?? Number.NaN));
      if (values.some((value) => !Number.isFinite(value))) return;
      const each = values.map((value) => value.toFixed(2)).join(", ");
      report(label, median(values).toFixed(2), `median of ${each}; ${note}`);
    };
    ratio("worker / raw fetch", WORKER, RAW, "target ≥ 0.6");
    ratio("worker / flat loop", WORKER, FLAT, "what the worker's layers cost");
    ratio("worker / BullMQ", WORKER, BULL, "target ≥ 2.2");
    const sustained = median(perRound.map((f) => f.get(WORKER) ?? 0));
    const rate = options.latencyRate ?? sustained / 2;
    const latency = await latencyAtRate({
      sink: await startSink({ report: true }),
      path: join(scratch, "latency.db"),
      ratePerSecond: rate,
      seconds: options.latencySeconds,
      concurrency,
    });
    const share = options.latencyRate ? "BENCH_SUSTAINED_LATENCY_RATE" : "half the worker's median";
    const note = `${latency.count.toLocaleString("en")} deliveries at ${perSecond(rate)} (${share}) for ${options.latencySeconds} s`;
    report("enqueue → arrival, p50", `${latency.p50.toFixed(1)} ms`, note);
    report("enqueue → arrival, p99", `${latency.p99.toFixed(1)} ms`);
    report("enqueue → arrival, max", `${latency.max.toFixed(1)} ms`);
    report(
      "  … delivered meanwhile",
      perSecond(latency.deliveredPerSecond),
      latency.deliveredPerSecond < rate * 0.95
        ? "first enqueue to last arrival: below the rate fed, the worker fell behind"
        : "first enqueue to last arrival: the worker kept up",
    );
  } finally {
    await sink.stop();
    redis?.process.kill("SIGTERM");
    await redis?.process.exited;
    rmSync(scratch, { recursive: true, force: true });
  }
}

const perSecond = (value: number) => `${Math.round(value).toLocaleString("en")}/s`;

/** Enqueues ticks per second: each tick's changes go in one transaction. */
const TICKS_PER_SECOND = 100;

/**
 * A worker process left running on a fresh SQLite store, fed `ratePerSecond` changes for
 * `seconds`; enqueue-to-arrival times (the sink's clock and this process's are the same
 * wall clock, read with sub-millisecond precision).
 */
async function latencyAtRate(options: {
  sink: Sink;
  path: string;
  ratePerSecond: number;
  seconds: number;
  concurrency: number;
}): Promise<{ count: number; p50: number; p99: number; max: number; deliveredPerSecond: number }> {
  const { sink, path } = options;
  const store = openSqliteStore(path);
  await store.webhooks.create({ name: "sink", url: `${sink.url}/hook` });
  const worker = Bun.spawn(["bun", WORKER_SCRIPT], {
    env: benchWorkerEnv(path, options.concurrency),
    stdout: "ignore",
    stderr: "pipe",
  });
  // Arrivals are read as they come: a sink whose output pipe filled would stall, and so the worker.
  const arrivals = new Map<string, number>();
  let expected = Number.POSITIVE_INFINITY;
  const allArrived = Promise.withResolvers<void>();
  const reading = (async () => {
    for (;;) {
      const line = await sink.lines.next();
      if (line.done) return;
      const [, messageId, at] = line.value.split(" ");
      if (messageId) arrivals.set(messageId, Number(at));
      if (arrivals.size >= expected) allArrived.resolve();
    }
  })();
  const enqueuedAt = new Map<number, number>();
  try {
    // One delivery through first: the worker has started and is idle when the load begins.
    const [warm] = await store.queue.enqueue(benchChange(0));
    for (let waited = 0; arrivals.size === 0; waited += 10) {
      if (worker.exitCode !== null || waited > 30_000) {
        throw new Error(`the worker did not deliver: ${await new Response(worker.stderr).text()}`);
      }
      await Bun.sleep(10);
    }
    const total = Math.max(1, Math.round(options.ratePerSecond * options.seconds));
    const perTick = options.ratePerSecond / TICKS_PER_SECOND;
    const started = preciseNow();
    for (let tick = 1, sent = 0; sent < total; tick++) {
      const due = Math.min(total, Math.round(tick * perTick));
      if (due > sent) {
        const at = preciseNow();
        const changes = Array.from({ length: due - sent }, (_, i) => benchChange(sent + i + 1));
        for (const id of await store.queue.enqueueMany(changes)) enqueuedAt.set(id, at);
        sent = due;
      }
      const wait = started + (tick * 1000) / TICKS_PER_SECOND - preciseNow();
      if (wait > 0) await Bun.sleep(wait);
    }
    expected = total + 1;
    if (arrivals.size >= expected) allArrived.resolve();
    const deadline = Bun.sleep(60_000 + options.seconds * 1000).then(() => "timeout" as const);
    if ((await Promise.race([allArrived.promise, deadline])) === "timeout") {
      throw new Error(`only ${arrivals.size - 1} of ${total} deliveries arrived`);
    }
    const latencies: number[] = [];
    let lastArrival = 0;
    const db = new Database(path, { readonly: true });
    try {
      const rows = db.query<{ id: number; message_id: string }, []>(
        "SELECT id, message_id FROM deliveries",
      );
      for (const row of rows.iterate()) {
        const at = enqueuedAt.get(row.id);
        const arrived = arrivals.get(row.message_id);
        if (row.id !== warm && at !== undefined && arrived !== undefined) {
          latencies.push(arrived - at);
          lastArrival = Math.max(lastArrival, arrived);
        }
      }
    } finally {
      db.close();
    }
    latencies.sort((a, b) => a - b);
    const q = (p: number) =>
      latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0;
    const deliveredPerSecond = (latencies.length / (lastArrival - started)) * 1000;
    return { count: latencies.length, p50: q(0.5), p99: q(0.99), max: q(1), deliveredPerSecond };
  } finally {
    worker.kill("SIGTERM");
    await worker.exited;
    await store.close();
    await sink.stop();
    await reading;
  }
}
