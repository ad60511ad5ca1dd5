/**
 * bench:webhooks section: the PostgreSQL store next to SQLite in one run. Deliveries per second
 * end to end (worker processes → a sink process on loopback) with 1 and 3 worker processes on
 * each store, and enqueue-to-first-attempt latency with an idle worker (PostgreSQL: LISTEN/NOTIFY;
 * SQLite: WAL file events). PostgreSQL is a throwaway cluster started here
 * (initdb + pg_ctl, loopback, removed afterwards). Counts and times are bounded.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { openPostgresStore } from "../lib/store/postgres/store.ts";
import { openSqliteStore } from "../lib/store/sqlite/store.ts";
import type { ChangeEvent } from "../lib/webhooks/model.ts";
import type { Store } from "../lib/webhooks/ports.ts";
import {
  postgresUnavailableReason,
  startPostgresCluster,
} from "../tests/fakes/postgres-cluster.ts";
import { readLines } from "./shared.ts";

export interface PostgresSectionOptions {
  /** Deliveries per throughput run. */
  deliveries?: number;
  /** Requests in flight per worker process. */
  concurrency?: number;
  /** Enqueue-to-first-attempt samples per store. */
  latencySamples?: number;
  /** Free text (setup, skip notice). */
  print?: (line: string) => void;
  /** One figure: what, how much, and a note (bench:webhooks passes its own aligned reporter). */
  report?: (label: string, value: string, note?: string) => void;
}

export const POSTGRES_SECTION_TITLE =
  "PostgreSQL store next to SQLite: worker processes → sink process, idle wake-up";

export interface ThroughputFigure {
  store: "sqlite" | "postgres";
  workers: number;
  deliveriesPerSecond: number;
  enqueuedPerSecond: number;
}

export interface LatencyFigure {
  store: "sqlite" | "postgres";
  p50: number;
  p99: number;
  max: number;
  /** Share of one core the idle worker used while waiting for work. */
  idleCpu: number;
}

const WORKER_SCRIPT = join(import.meta.dir, "..", "scripts", "worker.ts");
const WEBHOOKS = 10;
const DRAIN_LIMIT_MS = 300_000;
const IDLE_MS = 3000;

/** Closest to SQLite's WAL + synchronous=NORMAL: durable on disk, commits not waiting for fsync. */
const BENCH_SETTINGS = { fsync: "on", full_page_writes: "on", synchronous_commit: "off" };

/**
 * A 200-answering endpoint in a process of its own, so the workers' requests cost this process
 * nothing. With --report it prints `hit <epoch ms>` for each request (latency runs).
 */
const SINK_SOURCE = `
const report = process.argv.includes("--report");
const server = Bun.serve({
  hostname: "127.0.0.1", port: 0,
  async fetch(request) {
    await request.arrayBuffer();
    if (report) console.log("hit " + (performance.timeOrigin + performance.now()));
    return new Response("ok");
  },
});
console.log("port " + server.port);
`;

export async function postgresSection(options: PostgresSectionOptions = {}): Promise<{
  throughput: ThroughputFigure[];
  latency: LatencyFigure[];
} | null> {
  const deliveries = options.deliveries ?? 20_000;
  const concurrency = options.concurrency ?? 16;
  const samples = options.latencySamples ?? 200;
  const print = options.print ?? ((line: string) => console.log(line));
  const report =
    options.report ??
    ((label: string, value: string, note?: string) =>
      print(`  ${label.padEnd(44)} ${value.padStart(14)}${note ? `   ${note}` : ""}`));

  const unavailable = postgresUnavailableReason();
  if (unavailable) {
    print(`  skipped: ${unavailable}`);
    return null;
  }
  const settings = Object.entries(BENCH_SETTINGS).map(([key, value]) => `${key}=${value}`);
  print(
    `  ${deliveries} deliveries per run (${WEBHOOKS} webhooks), worker processes → sink process, ${concurrency} in flight per worker; PostgreSQL ${settings.join(", ")}`,
  );

  const cluster = await startPostgresCluster({ settings: BENCH_SETTINGS });
  const scratch = mkdtempSync(join(tmpdir(), "bench-pg-"));
  let sqliteFiles = 0;
  const backends = {
    sqlite: async () => {
      const path = join(scratch, `app-${++sqliteFiles}.db`);
      return { url: path, store: openSqliteStore(path) as Store };
    },
    postgres: async () => {
      const url = await cluster.createDatabase();
      return { url, store: await openPostgresStore(url) };
    },
  };

  try {
    const throughput: ThroughputFigure[] = [];
    const sink = await startSink(false);
    try {
      for (const kind of ["sqlite", "postgres"] as const) {
        for (const workers of [1, 3]) {
          const figure = await measureThroughput(await backends[kind](), {
            kind,
            workers,
            deliveries,
            concurrency,
            sinkPort: sink.port,
          });
          throughput.push(figure);
          report(
            `${kind}, ${workers} worker process${workers === 1 ? "" : "es"}`,
            perSecond(figure.deliveriesPerSecond),
            `deliveries/s (enqueue ${perSecond(figure.enqueuedPerSecond)})`,
          );
        }
      }
    } finally {
      await stopProcess(sink.child);
    }

    await measureBulkEnqueue(await backends.postgres(), deliveries, report);

    const latency: LatencyFigure[] = [];
    for (const kind of ["sqlite", "postgres"] as const) {
      const figure = await measureLatency(await backends[kind](), { kind, samples });
      latency.push(figure);
      const how = kind === "postgres" ? "LISTEN/NOTIFY" : "WAL file events";
      report(
        `${kind}, enqueue → first attempt, p50 / p99`,
        `${figure.p50.toFixed(1)} / ${figure.p99.toFixed(1)} ms`,
        `idle worker, ${how}, ${samples} samples, max ${figure.max.toFixed(1)} ms`,
      );
      report(
        `${kind}, idle worker CPU over ${IDLE_MS / 1000} s`,
        `${(figure.idleCpu * 100).toFixed(2)}%`,
        "of one core",
      );
    }
    return { throughput, latency };
  } finally {
    await cluster.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * `webhooks emit --count N` on PostgreSQL: N changes in one transaction for one webhook, one
 * enqueue per change (two round trips each) against enqueueMany in batches of 1000 (one
 * statement per batch), as the command does.
 */
async function measureBulkEnqueue(
  target: { store: Store },
  count: number,
  report: (label: string, value: string, note?: string) => void,
): Promise<void> {
  const { store } = target;
  try {
    await store.webhooks.create({ name: "emit", url: "http://127.0.0.1:9/" });
    let started = performance.now();
    await store.transaction(async (tx) => {
      for (let i = 0; i < count; i++) await tx.queue.enqueue(benchChange(i));
    });
    const single = count / ((performance.now() - started) / 1000);
    started = performance.now();
    await store.transaction(async (tx) => {
      for (let done = 0; done < count; done += 1000) {
        const batch = Array.from({ length: Math.min(1000, count - done) }, (_, i) =>
          benchChange(done + i),
        );
        await tx.queue.enqueueMany(batch);
      }
    });
    const batched = count / ((performance.now() - started) / 1000);
    report(
      `postgres, emit ${count} changes, one by one`,
      perSecond(single),
      "changes/s, one transaction, enqueue() per change",
    );
    report(
      `postgres, emit ${count} changes, batched`,
      perSecond(batched),
      "changes/s, one transaction, enqueueMany() per 1000 (webhooks emit --count)",
    );
  } finally {
    await store.close();
  }
}

function perSecond(value: number): string {
  return `${Math.round(value).toLocaleString("en")}/s`;
}

async function measureThroughput(
  target: { url: string; store: Store },
  run: {
    kind: "sqlite" | "postgres";
    workers: number;
    deliveries: number;
    concurrency: number;
    sinkPort: number;
  },
): Promise<ThroughputFigure> {
  const { store } = target;
  const workers: Subprocess[] = [];
  try {
    const hooks = [];
    for (let i = 0; i < WEBHOOKS; i++) {
      hooks.push(
        await store.webhooks.create({
          name: `sink-${i}`,
          url: `http://127.0.0.1:${run.sinkPort}/hook/${i}`,
        }),
      );
    }
    const enqueueStarted = performance.now();
    await enqueueMany(store, run.deliveries / WEBHOOKS);
    const enqueuedPerSecond = run.deliveries / ((performance.now() - enqueueStarted) / 1000);

    // Workers start idle (webhooks disabled) so their start-up is not timed; enabling the
    // webhooks wakes them (SQLite: a WAL change; PostgreSQL: NOTIFY).
    for (const hook of hooks) await store.webhooks.update(hook.id, { enabled: false });
    for (let i = 0; i < run.workers; i++) {
      workers.push(
        await startWorker(target.url, {
          WEBHOOK_ALLOWED_HOSTS: "127.0.0.1",
          WEBHOOK_CONCURRENCY: String(run.concurrency),
          WEBHOOK_MAX_ATTEMPTS: "1",
        }),
      );
    }
    const started = performance.now();
    for (const hook of hooks) await store.webhooks.update(hook.id, { enabled: true });
    await untilAllDone(store, run.deliveries);
    const seconds = (performance.now() - started) / 1000;
    return {
      store: run.kind,
      workers: run.workers,
      deliveriesPerSecond: run.deliveries / seconds,
      enqueuedPerSecond,
    };
  } finally {
    await Promise.all(workers.map(stopProcess));
    await store.close();
  }
}

async function measureLatency(
  target: { url: string; store: Store },
  run: { kind: "sqlite" | "postgres"; samples: number },
): Promise<LatencyFigure> {
  const { store } = target;
  const sink = await startSink(true);
  let worker: Subprocess | undefined;
  try {
    await store.webhooks.create({ name: "sink", url: `http://127.0.0.1:${sink.port}/hook` });
    worker = await startWorker(target.url, { WEBHOOK_ALLOWED_HOSTS: "127.0.0.1" });
    // One delivery first, so the worker has connected (and, on PostgreSQL, is listening).
    await store.queue.enqueue(benchChange(-1));
    await sink.nextLine();
    const idleCpu = await cpuShare(worker.pid, IDLE_MS);
    const latencies: number[] = [];
    for (let i = 0; i < run.samples + 10; i++) {
      const enqueuedAt = performance.timeOrigin + performance.now();
      await store.queue.enqueue(benchChange(i));
      const line = await sink.nextLine();
      // The first few warm up connections and prepared statements.
      if (i >= 10) latencies.push(Number(line.slice("hit ".length)) - enqueuedAt);
      // A pause (as in bench:webhooks' SQLite figure), so every sample starts from an idle worker.
      await Bun.sleep(20 + Math.random() * 20);
    }
    latencies.sort((a, b) => a - b);
    const at = (q: number) =>
      latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
    return { store: run.kind, p50: at(0.5), p99: at(0.99), max: latencies.at(-1) ?? 0, idleCpu };
  } finally {
    if (worker) await stopProcess(worker);
    await stopProcess(sink.child);
    await store.close();
  }
}

/** `count` enqueues, eight at a time; each fans out to every webhook. */
async function enqueueMany(store: Store, count: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < count) {
        await store.queue.enqueue(benchChange(next++));
      }
    }),
  );
}

/**
 * Polls (this is a benchmark, not a test) until nothing is queued or leased. nextDueAt() reads
 * two partial indexes; counting every row each time would load the database being measured.
 */
async function untilAllDone(store: Store, total: number): Promise<void> {
  const deadline = performance.now() + DRAIN_LIMIT_MS;
  while ((await store.queue.nextDueAt()) !== null) {
    if (performance.now() > deadline) throw new Error("Not drained in time");
    await Bun.sleep(20);
  }
  const stats = await store.queue.stats();
  if (stats.successful !== total) throw new Error(`Not all delivered: ${JSON.stringify(stats)}`);
}

function benchChange(n: number): ChangeEvent {
  return {
    event: "item.updated",
    model: "item",
    username: "bench",
    requestId: `bench-${n}`,
    data: { id: n, sku: `SKU-${n}`, name: "Bench item", quantity: n, location: "A1" },
    prechange: { quantity: n - 1 },
    postchange: { quantity: n },
    timestamp: new Date(),
  };
}

interface Sink {
  child: Subprocess<"ignore", "pipe", "inherit">;
  port: number;
  nextLine(): Promise<string>;
}

async function startSink(report: boolean): Promise<Sink> {
  // `--`: without it `bun -e` keeps `--report` for itself and the sink never reports a hit.
  const flags = report ? ["--", "--report"] : [];
  const child = Bun.spawn([process.execPath, "-e", SINK_SOURCE, ...flags], {
    stdin: "ignore",
    stdout: "pipe",
    stderr: "inherit",
  });
  const lines = readLines(child.stdout);
  const first = await lines.next();
  if (first.done || !first.value.startsWith("port ")) throw new Error("The sink did not start");
  return {
    child,
    port: Number(first.value.slice("port ".length)),
    async nextLine() {
      const line = await lines.next();
      if (line.done) throw new Error("The sink exited");
      return line.value;
    },
  };
}

/** Starts `bun scripts/worker.ts` and resolves once it logs that it started. */
async function startWorker(databaseUrl: string, env: Record<string, string>): Promise<Subprocess> {
  const child = Bun.spawn([process.execPath, WORKER_SCRIPT], {
    env: { ...process.env, DATABASE_URL: databaseUrl, ...env },
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe",
  });
  const lines = readLines(child.stderr);
  let log = "";
  for (;;) {
    const line = await lines.next();
    if (line.done) throw new Error(`The worker exited before starting:\n${log}`);
    log += `${line.value}\n`;
    if (/started/.test(line.value)) break;
  }
  // Keep draining its log so a full pipe never blocks it.
  void (async () => {
    for await (const _ of lines) {
    }
  })();
  return child;
}

/** Share of one core a process used over `ms`, from /proc/<pid>/stat (utime + stime). */
async function cpuShare(pid: number, ms: number): Promise<number> {
  const ticksPerSecond = 100; // USER_HZ on Linux
  const read = () => {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    return Number(fields[11]) + Number(fields[12]);
  };
  const before = read();
  const started = performance.now();
  await Bun.sleep(ms);
  return (read() - before) / ticksPerSecond / ((performance.now() - started) / 1000);
}

async function stopProcess(child: Subprocess): Promise<void> {
  child.kill("SIGTERM");
  await child.exited;
}

if (import.meta.main) {
  console.log(POSTGRES_SECTION_TITLE);
  await postgresSection();
}
