/**
 * `bun run bench:webhooks`: delivery throughput end to end next to the raw fetch ceiling,
 * enqueue throughput, enqueue-to-first-attempt latency with an idle worker, and the idle
 * worker's CPU use. Prints figures; asserts nothing. Everything runs on 127.0.0.1.
 *
 * One function per section, each taking the shared context: later work adds sections (PATCH
 * latency, PostgreSQL, metrics overhead) to SECTIONS without touching the others.
 *
 * The endpoint is bench/sink.ts, a process of its own.
 */
import { Database } from "bun:sqlite";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { defineCommand } from "citty";
import { z } from "zod";
import { runScript } from "../lib/cli/run.ts";
import { intInRange, parseEnv } from "../lib/config/env.ts";
import { openSqliteStore } from "../lib/store/sqlite/store.ts";
import type { Store } from "../lib/webhooks/ports.ts";
import { BULK_TITLE, bulkSection } from "./bulk.ts";
import { CHANGE_LIMITS_TITLE, changeLimitsSection } from "./change-limits.ts";
import { OPS_OVERHEAD_TITLE, opsOverheadSection } from "./ops-overhead.ts";
import { ORDERED_TITLE, orderedSection } from "./ordered.ts";
import {
  CONCURRENT_PATCH_TITLE,
  concurrentPatchSection,
  PATCH_LATENCY_TITLE,
  patchLatencySection,
} from "./patch-latency.ts";
import { PEERS_TITLE, peersSection } from "./peers.ts";
import { POSTGRES_SECTION_TITLE, postgresSection } from "./postgres.ts";
import { benchChange as change, enqueueBench } from "./shared.ts";
import { preciseNow, type Sink, startSink } from "./sink.ts";
import { SLOW_RENDERS_TITLE, slowRendersSection } from "./slow-renders.ts";
import { SUSTAINED_TITLE, sustainedSection } from "./sustained.ts";
import { TEMPLATE_BOMB_TITLE, templateBombSection } from "./template-bomb.ts";
import { TEMPLATES_SECTION_TITLE, templatesSection } from "./templates.ts";
import { STATS_TITLE, statsSection } from "./webhook-stats.ts";
import { ANATOMY_TITLE, anatomySection } from "./worker-anatomy.ts";

const ROOT = join(import.meta.dir, "..");

/** BENCH_* settings, parsed once in main(); a bad value is one line and exit 2. */
const settingsSchema = z.object({
  BENCH_DELIVERIES: intInRange(100, 1_000_000).default(20_000),
  BENCH_CONCURRENCY: intInRange(1, 1024).default(16),
  BENCH_PEER_CONCURRENCY: intInRange(1, 1024).default(64),
  BENCH_PEER_ROUNDS: intInRange(1, 9).default(3),
  BENCH_LATENCY_SAMPLES: intInRange(1, 100_000).default(200),
  BENCH_IDLE_SECONDS: intInRange(1, 3600).default(10),
  BENCH_OPS_ROUNDS: intInRange(1, 100).default(5),
  BENCH_PATCH_REQUESTS: intInRange(10, 1_000_000).default(2000),
  /** Deliveries a side in the sustained section (BENCH_SECTIONS=sustained). */
  BENCH_SUSTAINED_COUNT: intInRange(1000, 10_000_000).default(200_000),
  /** How long the sustained section feeds the worker at half its rate for the latency. */
  BENCH_SUSTAINED_LATENCY_SECONDS: intInRange(1, 3600).default(20),
  /** A fixed rate for that latency (to compare trees); unset: half the worker's sustained rate. */
  BENCH_SUSTAINED_LATENCY_RATE: intInRange(1, 1_000_000).optional(),
  /** e.g. BENCH_SECTIONS=throughput,idle runs only those. */
  BENCH_SECTIONS: z.string().optional(),
});
let DELIVERIES = 20_000;
let CONCURRENCY = 16;
let PEER_CONCURRENCY = 64;
let PEER_ROUNDS = 3;
let LATENCY_SAMPLES = 200;
let IDLE_SECONDS = 10;
let OPS_ROUNDS = 5;
let PATCH_REQUESTS = 2000;
let SUSTAINED_COUNT = 200_000;
let SUSTAINED_LATENCY_SECONDS = 20;
let SUSTAINED_LATENCY_RATE: number | undefined;

/**
 * The worker as deployed: its defaults, the SSRF check on, and the allow-list the docs'
 * walkthrough sets for a local receiver (its host:port).
 */
function startWorker(path: string, receiverUrl: string, args: string[]) {
  return Bun.spawn(["bun", join(ROOT, "scripts/worker.ts"), ...args], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: path,
      WEBHOOK_ALLOWED_HOSTS: new URL(receiverUrl).host,
      WEBHOOK_CONCURRENCY: String(CONCURRENCY),
    },
    stdout: "ignore",
    stderr: "pipe",
  });
}

interface Context {
  dir: string;
  /** A fresh database file with one webhook pointing at `url`. */
  freshStore(url: string): Promise<{ store: Store; path: string }>;
  report(label: string, value: string, note?: string): void;
}

type Section = (context: Context) => Promise<void>;

/** [key for BENCH_SECTIONS, title, section]. */
const SECTIONS: Array<[string, string, Section]> = [
  ["enqueue", "Enqueue throughput (SQLite)", enqueueThroughput],
  ["templates", TEMPLATES_SECTION_TITLE, (context) => templatesSection({ report: context.report })],
  ["bomb", TEMPLATE_BOMB_TITLE, (context) => templateBombSection({ report: context.report })],
  ["limits", CHANGE_LIMITS_TITLE, (context) => changeLimitsSection({ report: context.report })],
  ["slow-renders", SLOW_RENDERS_TITLE, (context) => slowRendersSection({ report: context.report })],
  ["bulk", BULK_TITLE, (context) => bulkSection({ report: context.report })],
  ["stats", STATS_TITLE, (context) => statsSection({ report: context.report })],
  ["throughput", "Delivery throughput, worker process → receiver process", deliveryThroughput],
  ["idle", "Idle worker: wake-up latency and CPU", idleWorker],
  [
    "patch",
    PATCH_LATENCY_TITLE,
    (context) =>
      patchLatencySection({ report: context.report, requests: PATCH_REQUESTS }).then(() => {}),
  ],
  [
    "patch16",
    CONCURRENT_PATCH_TITLE,
    (context) =>
      concurrentPatchSection({ report: context.report, requests: 2 * PATCH_REQUESTS }).then(
        () => {},
      ),
  ],
  [
    "blocked",
    "A blocked backlog: 100,000 deliveries waiting for a disabled webhook",
    blockedBacklog,
  ],
  [
    "peers",
    PEERS_TITLE,
    (context) =>
      peersSection({
        jobs: DELIVERIES,
        concurrency: PEER_CONCURRENCY,
        rounds: PEER_ROUNDS,
        report: context.report,
        print: (line) => console.log(line),
      }),
  ],
  [
    "sustained",
    SUSTAINED_TITLE,
    (context) =>
      sustainedSection({
        count: SUSTAINED_COUNT,
        concurrency: PEER_CONCURRENCY,
        rounds: PEER_ROUNDS,
        latencySeconds: SUSTAINED_LATENCY_SECONDS,
        latencyRate: SUSTAINED_LATENCY_RATE,
        report: context.report,
        print: (line) => console.log(line),
      }),
  ],
  [
    "anatomy",
    ANATOMY_TITLE,
    (context) =>
      anatomySection({
        jobs: DELIVERIES,
        concurrency: PEER_CONCURRENCY,
        rounds: PEER_ROUNDS,
        report: context.report,
      }),
  ],
  [
    "ops",
    OPS_OVERHEAD_TITLE,
    (context) =>
      opsOverheadSection({
        report: context.report,
        deliveries: DELIVERIES,
        concurrency: CONCURRENCY,
        rounds: OPS_ROUNDS,
      }).then(() => {}),
  ],
  [
    "ordered",
    ORDERED_TITLE,
    (context) =>
      orderedSection({
        deliveries: DELIVERIES,
        concurrency: CONCURRENCY,
        rounds: PEER_ROUNDS,
        report: context.report,
      }),
  ],
  [
    "postgres",
    POSTGRES_SECTION_TITLE,
    (context) =>
      postgresSection({
        report: context.report,
        print: (line) => console.log(line),
        deliveries: DELIVERIES,
        concurrency: CONCURRENCY,
        latencySamples: LATENCY_SAMPLES,
      }).then(() => {}),
  ],
];
async function main(env: Record<string, string | undefined>): Promise<void> {
  const settings = parseEnv(settingsSchema, env);
  DELIVERIES = settings.BENCH_DELIVERIES;
  CONCURRENCY = settings.BENCH_CONCURRENCY;
  PEER_CONCURRENCY = settings.BENCH_PEER_CONCURRENCY;
  PEER_ROUNDS = settings.BENCH_PEER_ROUNDS;
  LATENCY_SAMPLES = settings.BENCH_LATENCY_SAMPLES;
  IDLE_SECONDS = settings.BENCH_IDLE_SECONDS;
  OPS_ROUNDS = settings.BENCH_OPS_ROUNDS;
  PATCH_REQUESTS = settings.BENCH_PATCH_REQUESTS;
  SUSTAINED_COUNT = settings.BENCH_SUSTAINED_COUNT;
  SUSTAINED_LATENCY_SECONDS = settings.BENCH_SUSTAINED_LATENCY_SECONDS;
  SUSTAINED_LATENCY_RATE = settings.BENCH_SUSTAINED_LATENCY_RATE;
  const only = settings.BENCH_SECTIONS?.split(",").map((key) => key.trim());
  const dir = mkdtempSync(join(tmpdir(), "bench-webhooks-"));
  let databases = 0;
  const context: Context = {
    dir,
    async freshStore(url) {
      const path = join(dir, `bench-${++databases}.db`);
      const store = openSqliteStore(path);
      await store.webhooks.create({
        name: "bench",
        url,
        secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
      });
      return { store, path };
    },
    report(label, value, note) {
      console.log(`  ${label.padEnd(44)} ${value.padStart(14)}${note ? `   ${note}` : ""}`);
    },
  };
  console.log(
    `bench:webhooks — bun ${Bun.version}, ${cpus().length} CPUs, ${DELIVERIES} deliveries, concurrency ${CONCURRENCY}`,
  );
  console.log("(the machine is shared: figures vary from run to run)\n");
  try {
    for (const [key, title, section] of SECTIONS) {
      if (only && !only.includes(key)) continue;
      console.log(title);
      await section(context);
      console.log("");
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const rate = (count: number, ms: number) =>
  `${Math.round((count / ms) * 1000).toLocaleString("en")}/s`;

async function enqueueThroughput(context: Context): Promise<void> {
  const { store } = await context.freshStore("http://127.0.0.1:9/");
  const single = 5000;
  let started = performance.now();
  for (let i = 0; i < single; i++) await store.queue.enqueue(change(i));
  context.report(
    "one change per transaction",
    rate(single, performance.now() - started),
    "changes/s",
  );

  const batched = 20_000;
  started = performance.now();
  for (let batch = 0; batch < batched / 1000; batch++) {
    await store.transaction(async (tx) => {
      for (let i = 0; i < 1000; i++) await tx.queue.enqueue(change(i));
    });
  }
  context.report(
    "1000 changes per transaction",
    rate(batched, performance.now() - started),
    "changes/s",
  );
  await store.close();
}

async function deliveryThroughput(context: Context): Promise<void> {
  const receiver = await startSink();
  try {
    // The ceiling is measured again after each worker run and each run is compared with the
    // two ceilings around it: the machine is shared, and its load drifts within a run.
    const ceilings = [await rawFetchCeiling(receiver.url, DELIVERIES)];
    context.report(
      `raw fetch ceiling (${CONCURRENCY} in flight)`,
      perSecond(ceilings[0] ?? 0),
      "requests/s, plain fetch loop in this process",
    );
    context.report(
      "  … raw fetch loop CPU per request",
      `${Math.round(lastRawCpuMicros)} µs`,
      "this process, user + system",
    );
    const startup = await workerCpuMs(await context.freshStore(`${receiver.url}/hook`), receiver);
    // By name: the worker looks the host up (from /etc/hosts here) and checks it, each kept 30 s.
    const byName = receiver.url.replace("127.0.0.1", "localhost");
    const variants: Array<[string, string[], string]> = [
      ["worker (defaults)", [], receiver.url],
      ["worker --prefetch 0", ["--prefetch", "0"], receiver.url],
      ["worker, webhook URL by host name (localhost)", [], byName],
    ];
    for (const [label, args, base] of variants) {
      const { store, path } = await context.freshStore(`${base}/hook`);
      await store.transaction(async (tx) => {
        for (let i = 0; i < DELIVERIES; i++) await tx.queue.enqueue(change(i));
      });
      await receiver.reset();
      const sinkCpuBefore = receiver.cpuMs();
      const started = performance.now();
      const worker = startWorker(path, base, ["--once", ...args]);
      const code = await worker.exited;
      const total = performance.now() - started;
      const cpuMs = cpuOf(worker);
      const arrived = await receiver.stats();
      const stats = await store.queue.stats();
      await store.close();
      if (code !== 0) {
        throw new Error(`worker exited ${code}: ${await new Response(worker.stderr).text()}`);
      }
      ceilings.push(await rawFetchCeiling(receiver.url, DELIVERIES));
      const around = ((ceilings.at(-2) ?? 0) + (ceilings.at(-1) ?? 0)) / 2;
      // Both times from the receiver's clock: the worker's start-up is left out.
      const delivered = (arrived.count / (arrived.last - arrived.first)) * 1000;
      context.report(
        label,
        perSecond(delivered),
        `deliveries/s = ${Math.round((delivered / around) * 100)}% of the ceiling around it (target ≥ 50%)`,
      );
      context.report(
        "  … worker CPU per delivery",
        `${Math.round(((cpuMs - startup) * 1000) / Math.max(1, arrived.count))} µs`,
        `user + system, start-up (${Math.round(startup)} ms) left out`,
      );
      context.report(
        "  … sink CPU per delivery",
        `${Math.round(((receiver.cpuMs() - sinkCpuBefore) * 1000) / Math.max(1, arrived.count))} µs`,
        "the receiving process, user + system (10 ms ticks)",
      );
      context.report(
        "  … counting process start-up",
        perSecond((arrived.count / total) * 1000),
        `${stats.successful} successful, ${DELIVERIES - stats.successful} not`,
      );
    }
    context.report(
      "raw fetch ceilings measured",
      ceilings.map((c) => Math.round(c).toLocaleString("en")).join(", "),
      "requests/s, before and after each run",
    );
  } finally {
    await receiver.stop();
  }
}

/**
 * The delivery rate of a healthy webhook with and without 100,000 due deliveries waiting for a
 * disabled one (an auto-disabled endpoint with a backlog): the claim reads per sendable webhook,
 * so the backlog should cost nothing.
 */
async function blockedBacklog(context: Context): Promise<void> {
  const receiver = await startSink();
  try {
    const rates: number[] = [];
    for (const backlog of [0, 100_000]) {
      const { store, path } = await context.freshStore(`${receiver.url}/hook`);
      const blocked = await store.webhooks.create({
        name: "blocked",
        url: "http://127.0.0.1:9/",
        enabled: false,
      });
      await enqueueBench(store, DELIVERIES);
      await store.close();
      if (backlog > 0) {
        const db = new Database(path);
        db.run(
          `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
           INSERT INTO deliveries (webhook_id, message_id, event, state, attempts,
             next_attempt_at, created_at, updated_at)
           SELECT ?2, 'blocked_' || i, 'item.updated', 'queued', 0, i, i, i FROM n`,
          [backlog, blocked.id],
        );
        db.close();
      }
      await receiver.reset();
      const worker = startWorker(path, receiver.url, ["--once"]);
      const code = await worker.exited;
      if (code !== 0) {
        throw new Error(`worker exited ${code}: ${await new Response(worker.stderr).text()}`);
      }
      const arrived = await receiver.stats();
      const delivered = (arrived.count / (arrived.last - arrived.first)) * 1000;
      rates.push(delivered);
      context.report(
        backlog === 0 ? "healthy webhook alone" : "next to 100,000 blocked deliveries",
        perSecond(delivered),
        `deliveries/s, ${arrived.count} delivered`,
      );
    }
    context.report(
      "blocked / alone",
      `${((rates[1] ?? 0) / (rates[0] ?? 1)).toFixed(2)}×`,
      "1.00× = the backlog costs nothing",
    );
  } finally {
    await receiver.stop();
  }
}

const perSecond = (value: number) => `${Math.round(value).toLocaleString("en")}/s`;

/** CPU time (user + system) a finished child process used, in ms. */
function cpuOf(child: Subprocess): number {
  const usage = child.resourceUsage();
  return usage ? Number(usage.cpuTime.user + usage.cpuTime.system) / 1000 : 0;
}

/** CPU a worker spends starting and stopping, from `--once` on a database with nothing due. */
async function workerCpuMs(fresh: { store: Store; path: string }, receiver: Sink) {
  await fresh.store.close();
  const worker = startWorker(fresh.path, receiver.url, ["--once"]);
  await worker.exited;
  return cpuOf(worker);
}

/**
 * A plain fetch loop with CONCURRENCY requests in flight: what one process can send at best, in
 * requests per second.
 */
async function rawFetchCeiling(url: string, count: number): Promise<number> {
  const body = JSON.stringify({ event: "updated", data: change(0).data });
  let next = 0;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        next++;
        const response = await fetch(`${url}/raw`, {
          method: "POST",
          body,
          headers: { "content-type": "application/json" },
        });
        await response.arrayBuffer();
      }
    }),
  );
  const rate = (count / (performance.now() - started)) * 1000;
  const cpu = process.cpuUsage(cpuBefore);
  lastRawCpuMicros = (cpu.user + cpu.system) / count;
  return rate;
}

/** CPU per request of the last raw fetch loop (this process), in µs. */
let lastRawCpuMicros = 0;

async function idleWorker(context: Context): Promise<void> {
  const receiver = await startSink({ report: true });
  const { store, path } = await context.freshStore(`${receiver.url}/hook`);
  const worker = startWorker(path, receiver.url, []);
  try {
    // Let the worker start and settle, then measure its CPU while nothing happens.
    await store.queue.enqueue(change(0));
    await receiver.lines.next();
    await Bun.sleep(1000);
    const cpu = await cpuShare(worker.pid, IDLE_SECONDS * 1000);
    context.report(
      `idle worker CPU over ${IDLE_SECONDS} s`,
      `${(cpu * 100).toFixed(2)}%`,
      "of one core",
    );

    const latencies: number[] = [];
    for (let i = 0; i < LATENCY_SAMPLES; i++) {
      const enqueuedAt = preciseNow();
      const [id] = await store.queue.enqueue(change(i));
      const messageId = (await store.queue.get(id ?? 0))?.delivery.messageId;
      for (;;) {
        const line = await receiver.lines.next();
        if (line.done) throw new Error("receiver stopped");
        const [, arrivedId, at] = line.value.split(" ");
        if (arrivedId === messageId) {
          latencies.push(Number(at) - enqueuedAt);
          break;
        }
      }
      // A pause, so that every sample starts from an idle worker.
      await Bun.sleep(20 + Math.random() * 20);
    }
    latencies.sort((a, b) => a - b);
    const at = (q: number) =>
      latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
    context.report(
      `enqueue → first attempt, p50 (${LATENCY_SAMPLES} samples)`,
      `${at(0.5).toFixed(1)} ms`,
    );
    context.report("enqueue → first attempt, p99", `${at(0.99).toFixed(1)} ms`);
    context.report("enqueue → first attempt, max", `${at(1).toFixed(1)} ms`);
  } finally {
    worker.kill("SIGTERM");
    await worker.exited;
    await store.close();
    await receiver.stop();
  }
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
  const elapsed = (performance.now() - started) / 1000;
  return (read() - before) / ticksPerSecond / elapsed;
}

await runScript(
  defineCommand({
    meta: {
      name: "bench:webhooks",
      description:
        "Benchmark webhook delivery. Env: BENCH_DELIVERIES (20000), BENCH_CONCURRENCY (16), BENCH_PEER_CONCURRENCY (64), BENCH_PEER_ROUNDS (3), BENCH_LATENCY_SAMPLES (200), BENCH_IDLE_SECONDS (10), BENCH_SUSTAINED_COUNT (200000), BENCH_SUSTAINED_LATENCY_SECONDS (20), BENCH_SUSTAINED_LATENCY_RATE (half the sustained rate), BENCH_SECTIONS (all).",
    },
    run: () => main(process.env),
  }),
);
