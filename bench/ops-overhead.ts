/**
 * bench:webhooks section: worker throughput with the operability hooks on (the production
 * configuration: attempts counted for --metrics-port, which is scraped every second, and a
 * heartbeat every 5 s) next to the same worker with them off (runWorker's `heartbeat: false`
 * and no `metrics`). Same code path otherwise: endpoint health, retention and the attempt log
 * run in both. The runs alternate (off/on, then on/off, …) after a discarded warm-up, so drift
 * on a shared machine falls on both alike. Measured twice: against a sink process over loopback
 * (the real thing) and with fetch answered in-process (the worker's own cost, without the sink
 * competing for the two cores). Everything is on loopback; counts are bounded.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadOperabilityConfig } from "../lib/config/operability.ts";
import { createLogger } from "../lib/log.ts";
import { openStore } from "../lib/store/open.ts";
import { openSqliteStore } from "../lib/store/sqlite/store.ts";
import { loadWorkerConfig } from "../lib/worker/config.ts";
import { runWorker } from "../lib/worker/process.ts";
import { benchChange as change, median } from "./shared.ts";

export const OPS_OVERHEAD_TITLE =
  "Operability overhead: worker throughput with metrics and heartbeats on vs off (in-process worker → sink process)";

export interface OpsOverheadOptions {
  deliveries?: number;
  concurrency?: number;
  /** Pairs of runs (one off, one on) after the warm-up. */
  rounds?: number;
  /** How often the "on" runs are scraped (Prometheus' default is 15 s). */
  scrapeEveryMs?: number;
  report?: (label: string, value: string, note?: string) => void;
}

export interface OpsOverheadSet {
  /** Deliveries per second of each run, in the order they ran. */
  off: number[];
  on: number[];
  /** CPU time of this process (the worker) per delivery, µs, per run. */
  offCpu: number[];
  onCpu: number[];
  /** median(on) / median(off). */
  ratio: number;
  /** The median of each round's on/off ratio (the two runs of a round ran back to back). */
  pairedRatio: number;
}

export interface OpsOverheadFigures {
  /** Worker → sink process over loopback HTTP. */
  network: OpsOverheadSet;
  /** The same worker with fetch answered in-process: its own cost, less noise from the sink. */
  alone: OpsOverheadSet;
}

/** A 200-answering endpoint in a process of its own, timing the first and last request. */
const SINK_SOURCE = `
let count = 0, first = 0, last = 0;
const server = Bun.serve({
  hostname: "127.0.0.1", port: 0,
  async fetch(request) {
    const path = new URL(request.url).pathname;
    if (path === "/__stats") return Response.json({ count, first, last });
    if (path === "/__reset") { count = first = last = 0; return new Response("reset"); }
    await request.arrayBuffer();
    const at = performance.timeOrigin + performance.now();
    count++;
    if (first === 0) first = at;
    last = at;
    return new Response("ok");
  },
});
console.log("port " + server.port);
`;

export async function opsOverheadSection(
  options: OpsOverheadOptions = {},
): Promise<OpsOverheadFigures> {
  const deliveries = options.deliveries ?? 20_000;
  const concurrency = options.concurrency ?? 16;
  const rounds = options.rounds ?? 5;
  const scrapeEveryMs = options.scrapeEveryMs ?? 1000;
  const report =
    options.report ??
    ((label: string, value: string, note?: string) =>
      console.log(`  ${label.padEnd(44)} ${value.padStart(14)}${note ? `   ${note}` : ""}`));

  const dir = mkdtempSync(join(tmpdir(), "bench-ops-"));
  const sink = Bun.spawn([process.execPath, "-e", SINK_SOURCE], {
    stdin: "ignore",
    stdout: "pipe",
    stderr: "inherit",
  });
  try {
    const port = /^port (\d+)/.exec(await firstLine(sink.stdout))?.[1];
    if (!port) throw new Error("the sink did not start");
    const sinkUrl = `http://127.0.0.1:${port}`;
    let runs = 0;

    /** One worker run over a fresh database; `network: false` answers fetch in-process. */
    async function run(
      on: boolean,
      network: boolean,
    ): Promise<{ perSecond: number; cpuPerDelivery: number }> {
      const path = join(dir, `ops-${++runs}.db`);
      const seed = openSqliteStore(path);
      await seed.webhooks.create({ name: "bench", url: `${sinkUrl}/hook` });
      await seed.transaction(async (tx) => {
        for (let i = 0; i < deliveries; i++) await tx.queue.enqueue(change(i));
      });
      await seed.close();
      await (await fetch(`${sinkUrl}/__reset`)).text();

      const env = {
        DATABASE_URL: path,
        WEBHOOK_ALLOWED_HOSTS: "127.0.0.1",
        WEBHOOK_CONCURRENCY: String(concurrency),
      };
      const config = loadWorkerConfig(env);
      // As `bun run worker` opens it; warn level keeps the start/stop lines out of the figures.
      const logger = createLogger({ level: 1 });
      const store = await openStore(config.database, { pollMs: config.pollMs, logger });
      const scraper = on ? startScraper(scrapeEveryMs) : null;
      let cpu = { user: 0, system: 0 };
      let successful = 0;
      const cpuBefore = process.cpuUsage();
      const started = performance.now();
      let elapsed = 0;
      try {
        await runWorker({
          store,
          config,
          logger,
          once: true,
          stop: new AbortController().signal,
          abortInFlight: new AbortController().signal,
          operability: loadOperabilityConfig(env), // heartbeat every 5 s, retention, auto-disable
          heartbeat: on,
          metrics: on ? { host: "127.0.0.1", port: 0 } : undefined,
          onMetricsListening: scraper?.target,
          fetch: network ? undefined : answerInProcess,
        });
        elapsed = performance.now() - started;
        successful = (await store.queue.stats()).successful;
      } finally {
        cpu = process.cpuUsage(cpuBefore);
        await scraper?.stop();
        await store.close();
      }
      if (successful !== deliveries) {
        throw new Error(`only ${successful} of ${deliveries} deliveries succeeded`);
      }
      const cpuPerDelivery = (cpu.user + cpu.system) / deliveries;
      if (!network) return { perSecond: (deliveries / elapsed) * 1000, cpuPerDelivery };
      // Both times from the sink's clock: the worker's start-up is left out.
      const arrived = (await (await fetch(`${sinkUrl}/__stats`)).json()) as {
        count: number;
        first: number;
        last: number;
      };
      return { perSecond: (arrived.count / (arrived.last - arrived.first)) * 1000, cpuPerDelivery };
    }

    async function measure(network: boolean, title: string): Promise<OpsOverheadSet> {
      await run(true, network); // warm-up (JIT, page cache), not counted
      const off: number[] = [];
      const on: number[] = [];
      const offCpu: number[] = [];
      const onCpu: number[] = [];
      for (let round = 0; round < rounds; round++) {
        for (const hooksOn of round % 2 === 0 ? [false, true] : [true, false]) {
          const figures = await run(hooksOn, network);
          (hooksOn ? on : off).push(figures.perSecond);
          (hooksOn ? onCpu : offCpu).push(figures.cpuPerDelivery);
        }
      }
      const ratio = median(on) / median(off);
      const paired = on.map((value, i) => value / (off[i] ?? value));
      const pairedRatio = median(paired);
      const runsNote = (values: number[]) =>
        `median of ${values.length} runs (${values.map(perSecond).join(", ")})`;
      const cpuNote = (values: number[]) => `runs ${values.map((v) => v.toFixed(0)).join(", ")}`;
      console.log(`  ${title}`);
      report("  off: no metrics, no heartbeat", perSecond(median(off)), runsNote(off));
      report("  on: metrics + heartbeat (production)", perSecond(median(on)), runsNote(on));
      report(
        "  on / off",
        `${(ratio * 100).toFixed(1)}%`,
        `per round: median ${(pairedRatio * 100).toFixed(1)}% of ${paired.map((r) => `${(r * 100).toFixed(0)}%`).join(", ")} (target ≥ 95%)`,
      );
      report("  worker CPU per delivery, off", `${median(offCpu).toFixed(1)} µs`, cpuNote(offCpu));
      report("  worker CPU per delivery, on", `${median(onCpu).toFixed(1)} µs`, cpuNote(onCpu));
      return { off, on, offCpu, onCpu, ratio, pairedRatio };
    }

    console.log(
      `  ${deliveries} deliveries a run, concurrency ${concurrency}; on: /metrics scraped every ${scrapeEveryMs / 1000} s, heartbeat every 5 s`,
    );
    const network = await measure(true, "worker → sink process over loopback:");
    const alone = await measure(false, "worker alone (fetch answered in-process, no network):");
    return { network, alone };
  } finally {
    sink.kill("SIGTERM");
    await sink.exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A receiver inside the worker's process: what the worker itself costs, without the network. */
const answerInProcess = (async () => new Response("ok")) as unknown as typeof fetch;

/** Scrapes the worker's /metrics every `everyMs` once it listens, as Prometheus would. */
function startScraper(everyMs: number) {
  let url: string | null = null;
  let scrapes = Promise.resolve();
  const timer = setInterval(() => {
    if (url === null) return;
    const target = url;
    scrapes = scrapes.then(async () => {
      const response = await fetch(target);
      if (!response.ok) throw new Error(`GET /metrics answered ${response.status}`);
      await response.text();
    });
  }, everyMs);
  return {
    target(metricsUrl: string) {
      url = metricsUrl;
    },
    async stop() {
      clearInterval(timer);
      await scrapes;
    },
  };
}

async function firstLine(stream: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (!text.includes("\n")) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  reader.releaseLock();
  return text.split("\n")[0] ?? "";
}

function perSecond(value: number): string {
  return `${Math.round(value).toLocaleString("en")}/s`;
}
