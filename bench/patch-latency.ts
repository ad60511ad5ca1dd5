/**
 * bench:webhooks section: PATCH /api/items/:id latency with three webhooks whose endpoint never
 * answers (a worker running, its requests hanging until the timeout), next to the same with no
 * webhooks. The request only writes the item and its deliveries, so the two should be close.
 * Everything is on loopback; counts and times are bounded.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStore } from "../lib/store/sqlite/store.ts";
import type { Store } from "../lib/webhooks/ports.ts";

export interface PatchLatencyOptions {
  requests?: number;
  warmup?: number;
  /** One figure: what, how much, and a note (bench:webhooks passes its aligned reporter). */
  report?: (label: string, value: string, note?: string) => void;
}

export interface LatencyFigures {
  p50: number;
  p99: number;
  mean: number;
}

const WORKER_SCRIPT = join(import.meta.dir, "..", "scripts", "worker.ts");
const APP_SCRIPT = join(import.meta.dir, "..", "scripts", "app.ts");
const TIMEOUT_MS = 10_000;
export const PATCH_LATENCY_TITLE =
  "PATCH /api/items/:id latency, app and worker processes (the request never waits for delivery)";

/**
 * Both setups run side by side (each an app process and a worker process on its own database)
 * and the PATCHes alternate between them, so load from anything else on the machine falls on
 * both alike. Each PATCH is a real change, so each queues a delivery per webhook.
 */
export async function patchLatencySection(
  options: PatchLatencyOptions = {},
): Promise<{ none: LatencyFigures; hanging: LatencyFigures; ratio: number }> {
  const requests = options.requests ?? 2000;
  const warmup = options.warmup ?? 200;
  const report =
    options.report ??
    ((label: string, value: string, note?: string) =>
      console.log(`  ${label.padEnd(44)} ${value.padStart(14)}${note ? `   ${note}` : ""}`));

  // Accepts connections and never answers: each delivery holds a worker slot until the timeout.
  const hangingEndpoint = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    fetch: () => new Promise<Response>(() => {}),
  });
  const endpointUrl = `http://127.0.0.1:${hangingEndpoint.port}`;
  const setups: Setup[] = [];
  try {
    setups.push(await startSetup(0, endpointUrl));
    setups.push(await startSetup(3, endpointUrl));
    const samples: number[][] = setups.map(() => []);
    for (let i = 0; i < warmup + requests; i++) {
      for (const [index, setup] of setups.entries()) {
        const took = await patch(setup.itemUrl, i + 1);
        if (i >= warmup) samples[index]?.push(took);
      }
    }
    const pending = await setups[1]?.store.queue.stats();
    if (!pending || pending.queued + pending.delivering === 0) {
      throw new Error("No deliveries were pending: the endpoint did not hang");
    }
    const none = figures(samples[0] ?? []);
    const hanging = figures(samples[1] ?? []);
    const ratio = hanging.p50 / none.p50;
    const sampleNote = `${requests} PATCHes each, after ${warmup} warm-up`;
    report("no webhooks, p50", ms(none.p50), sampleNote);
    report("no webhooks, p99", ms(none.p99));
    report("3 hanging webhooks, p50", ms(hanging.p50), `worker timeout ${TIMEOUT_MS / 1000} s`);
    report(
      "3 hanging webhooks, p99",
      ms(hanging.p99),
      `${pending.delivering} deliveries hanging, ${pending.queued} queued at the end`,
    );
    report("hanging / none, p50", `${ratio.toFixed(2)}×`, "target ≤ 1.5×");
    report("hanging / none, p99", `${(hanging.p99 / none.p99).toFixed(2)}×`);
    return { none, hanging, ratio };
  } finally {
    // Closing the endpoint ends the worker's hanging requests, so the workers stop at once.
    await hangingEndpoint.stop(true);
    for (const setup of setups) await setup.stop();
  }
}

export const CONCURRENT_PATCH_TITLE =
  "PATCH /api/items/:id latency under concurrency: 16 clients, app and worker processes";

/**
 * 16 clients PATCHing at once, with no webhook and with one whose endpoint answers at once (the
 * worker delivers as fast as it can, so its writes and the WAL checkpoints they cause share the
 * database with the app's). The app checkpoints in a background thread: its p99 should stay
 * near the one without webhooks.
 */
export async function concurrentPatchSection(
  options: PatchLatencyOptions & { clients?: number } = {},
): Promise<Array<{ webhooks: number } & LatencyFigures>> {
  const requests = options.requests ?? 4000;
  const warmup = options.warmup ?? 400;
  const clients = options.clients ?? 16;
  const report =
    options.report ??
    ((label: string, value: string, note?: string) =>
      console.log(`  ${label.padEnd(44)} ${value.padStart(14)}${note ? `   ${note}` : ""}`));
  const sink = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      await request.arrayBuffer();
      return new Response("ok");
    },
  });
  const results: Array<{ webhooks: number } & LatencyFigures> = [];
  try {
    for (const webhooks of [0, 1]) {
      const setup = await startSetup(webhooks, `http://127.0.0.1:${sink.port}`);
      try {
        const samples: number[] = [];
        let next = 0;
        await Promise.all(
          Array.from({ length: clients }, async () => {
            while (next < warmup + requests) {
              const n = next++;
              const took = await patch(setup.itemUrl, n + 1);
              if (n >= warmup) samples.push(took);
            }
          }),
        );
        const figure = { webhooks, ...figures(samples) };
        results.push(figure);
        const label = webhooks === 0 ? "no webhooks" : "1 webhook, answering at once";
        report(`${label}, p50`, ms(figure.p50), `${requests} PATCHes, ${clients} at a time`);
        report(`${label}, p99`, ms(figure.p99), webhooks === 0 ? "" : "target ≤ 15 ms");
      } finally {
        await setup.stop();
      }
    }
    return results;
  } finally {
    await sink.stop(true);
  }
}

interface Setup {
  itemUrl: string;
  store: Store;
  stop(): Promise<void>;
}

async function startSetup(webhooks: number, endpointUrl: string): Promise<Setup> {
  const dir = mkdtempSync(join(tmpdir(), "bench-patch-"));
  const databasePath = join(dir, "app.db");
  const store = openSqliteStore(databasePath);
  const children: Array<ReturnType<typeof Bun.spawn>> = [];
  const stop = async () => {
    for (const child of children) child.kill("SIGTERM");
    await Promise.all(children.map((child) => child.exited));
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let n = 1; n <= webhooks; n++) {
      await store.webhooks.create({
        name: `hanging ${n}`,
        url: `${endpointUrl}/${n}`,
        events: ["*"],
      });
    }
    const item = await store.items.create(
      { sku: "BENCH-1", name: "Bench item", quantity: 0, location: "" },
      new Date(),
    );
    const env = {
      ...process.env,
      DATABASE_URL: databasePath,
      WEBHOOK_ALLOWED_HOSTS: new URL(endpointUrl).host,
      WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
    };
    const worker = await start([WORKER_SCRIPT], env, /started/);
    children.push(worker.child);
    const app = await start([APP_SCRIPT, "--port", "0"], env, /on (http:\/\/127\.0\.0\.1:\d+);/);
    children.push(app.child);
    return { itemUrl: `${app.match[1]}/api/items/${item.id}`, store, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function patch(url: string, quantity: number): Promise<number> {
  const started = performance.now();
  const response = await fetch(url, {
    method: "PATCH",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ quantity }),
  });
  await response.arrayBuffer();
  const took = performance.now() - started;
  if (response.status !== 200) throw new Error(`PATCH answered ${response.status}`);
  return took;
}

/** Starts `bun <args>` and resolves once its log (stderr) matches `ready`. */
async function start(args: string[], env: Record<string, string | undefined>, ready: RegExp) {
  const child = Bun.spawn(["bun", ...args], { env, stdout: "ignore", stderr: "pipe" });
  const reader = child.stderr.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let match = text.match(ready);
  while (!match) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`bun ${args.join(" ")} exited before it was ready:\n${text}`);
    text += decoder.decode(value, { stream: true });
    match = text.match(ready);
  }
  // Keep draining its log so a full pipe never blocks it.
  void (async () => {
    while (!(await reader.read()).done) {}
  })();
  return { child, match };
}

function figures(samples: number[]): LatencyFigures {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  const mean = sorted.reduce((sum, x) => sum + x, 0) / Math.max(1, sorted.length);
  return { p50: at(0.5), p99: at(0.99), mean };
}

function ms(value: number): string {
  return `${value.toFixed(3)} ms`;
}

if (import.meta.main) {
  console.log(PATCH_LATENCY_TITLE);
  await patchLatencySection();
}
