/**
 * `bun run bench:webhooks`: delivery throughput end to end next to the raw fetch ceiling,
 * enqueue throughput, enqueue-to-first-attempt latency with an idle worker, and the idle
 * worker's CPU use. Prints figures; asserts nothing. Everything runs on 127.0.0.1.
 *
 * One function per section, each taking the shared context: later work adds sections (PATCH
 * latency, PostgreSQL, metrics overhead) to SECTIONS without touching the others.
 *
 * The receiver is this same file started with `--receiver`: a minimal Bun.serve answering 200
 * that prints `ARRIVED <webhook-id> <epoch ms>` for each request when asked to (`--report`).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { openSqliteStore } from "../lib/store/sqlite/store.ts";
import type { Store } from "../lib/webhooks/ports.ts";
import { OPS_OVERHEAD_TITLE, opsOverheadSection } from "./ops-overhead.ts";
import {
  CONCURRENT_PATCH_TITLE,
  concurrentPatchSection,
  PATCH_LATENCY_TITLE,
  patchLatencySection,
} from "./patch-latency.ts";
import { POSTGRES_SECTION_TITLE, postgresSection } from "./postgres.ts";
import { benchChange as change, readLines } from "./shared.ts";
import { TEMPLATES_SECTION_TITLE, templatesSection } from "./templates.ts";

const ROOT = join(import.meta.dir, "..");
const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 20_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const LATENCY_SAMPLES = Number(process.env.BENCH_LATENCY_SAMPLES ?? 200);
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 10);

/** Wall-clock milliseconds with sub-millisecond precision, comparable across processes. */
function preciseNow(): number {
  return performance.timeOrigin + performance.now();
}

function runReceiver(report: boolean): void {
  let count = 0;
  let first = 0;
  let last = 0;
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const path = new URL(request.url).pathname;
      if (path === "/__stats") return Response.json({ count, first, last });
      if (path === "/__reset") {
        count = first = last = 0;
        return new Response("reset");
      }
      await request.arrayBuffer();
      const at = preciseNow();
      count++;
      if (first === 0) first = at;
      last = at;
      if (report) process.stdout.write(`ARRIVED ${request.headers.get("webhook-id")} ${at}\n`);
      return new Response("ok");
    },
  });
  process.stdout.write(`PORT ${server.port}\n`);
  process.on("SIGTERM", () => {
    server.stop(true);
    process.exit(0);
  });
}

interface Receiver {
  url: string;
  process: Subprocess<"ignore", "pipe", "inherit">;
  /** Lines the receiver prints after PORT. */
  lines: AsyncIterator<string>;
  /** Requests since the last reset, and the arrival times of the first and last (epoch ms). */
  stats(): Promise<{ count: number; first: number; last: number }>;
  reset(): Promise<void>;
  stop(): Promise<void>;
}

async function startReceiver(report: boolean): Promise<Receiver> {
  const child = Bun.spawn(
    ["bun", import.meta.path, "--receiver", ...(report ? ["--report"] : [])],
    { stdout: "pipe", stderr: "inherit", stdin: "ignore" },
  );
  const lines = readLines(child.stdout);
  const first = await lines.next();
  const port = /^PORT (\d+)$/.exec(first.value ?? "")?.[1];
  if (!port) throw new Error(`receiver did not start: ${first.value}`);
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    process: child,
    lines,
    stats: async () => (await fetch(`${url}/__stats`)).json(),
    reset: async () => {
      await (await fetch(`${url}/__reset`)).text();
    },
    async stop() {
      child.kill("SIGTERM");
      await child.exited;
    },
  };
}

/**
 * The worker as deployed: its defaults, the SSRF check on, and the allow-list the README's
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
  ["throughput", "Delivery throughput, worker process → receiver process", deliveryThroughput],
  ["idle", "Idle worker: wake-up latency and CPU", idleWorker],
  [
    "patch",
    PATCH_LATENCY_TITLE,
    (context) => patchLatencySection({ report: context.report }).then(() => {}),
  ],
  [
    "patch16",
    CONCURRENT_PATCH_TITLE,
    (context) => concurrentPatchSection({ report: context.report }).then(() => {}),
  ],
  [
    "ops",
    OPS_OVERHEAD_TITLE,
    (context) =>
      opsOverheadSection({
        report: context.report,
        deliveries: DELIVERIES,
        concurrency: CONCURRENCY,
      }).then(() => {}),
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
/** e.g. BENCH_SECTIONS=throughput,idle runs only those. */
const ONLY = process.env.BENCH_SECTIONS?.split(",").map((key) => key.trim());

async function main(): Promise<void> {
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
      if (ONLY && !ONLY.includes(key)) continue;
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
  const receiver = await startReceiver(false);
  try {
    // The ceiling is measured again after each worker run and each run is compared with the
    // two ceilings around it: the machine is shared, and its load drifts within a run.
    const ceilings = [await rawFetchCeiling(receiver.url, DELIVERIES)];
    context.report(
      `raw fetch ceiling (${CONCURRENCY} in flight)`,
      perSecond(ceilings[0] ?? 0),
      "requests/s, plain fetch loop in this process",
    );
    const startup = await workerCpuMs(await context.freshStore(`${receiver.url}/hook`), receiver);
    const variants: Array<[string, string[]]> = [
      ["worker (defaults)", []],
      ["worker --prefetch 0", ["--prefetch", "0"]],
    ];
    for (const [label, args] of variants) {
      const { store, path } = await context.freshStore(`${receiver.url}/hook`);
      await store.transaction(async (tx) => {
        for (let i = 0; i < DELIVERIES; i++) await tx.queue.enqueue(change(i));
      });
      await receiver.reset();
      const started = performance.now();
      const worker = startWorker(path, receiver.url, ["--once", ...args]);
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

const perSecond = (value: number) => `${Math.round(value).toLocaleString("en")}/s`;

/** CPU time (user + system) a finished child process used, in ms. */
function cpuOf(child: Subprocess): number {
  const usage = child.resourceUsage();
  return usage ? Number(usage.cpuTime.user + usage.cpuTime.system) / 1000 : 0;
}

/** CPU a worker spends starting and stopping, from `--once` on a database with nothing due. */
async function workerCpuMs(fresh: { store: Store; path: string }, receiver: Receiver) {
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
  return (count / (performance.now() - started)) * 1000;
}

async function idleWorker(context: Context): Promise<void> {
  const receiver = await startReceiver(true);
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

// Last, so that every const above is initialised before the run starts.
if (process.argv.includes("--receiver")) {
  runReceiver(process.argv.includes("--report"));
} else {
  await main();
}
