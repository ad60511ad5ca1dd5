/**
 * bench:webhooks reference: what the worker's layers cost per delivery in CPU, with the network
 * and the disk left out, so that the small figure is not lost in the noise of two processes on a
 * shared machine. In this process, on an in-memory SQLite store, with a fetch that answers at
 * once: the worker as the worker command builds it (createDeliveryWorker: claim buffer, lease
 * rules, the sender with its SSRF check, the judge, group commit) against the flat loop
 * (bench/flat-loop.ts: the same SQL and request, none of the layers), alternated, medians.
 */

import { parseAllowList } from "../lib/http/ssrf.ts";
import { openSqliteStore } from "../lib/store/sqlite/store.ts";
import type { Store } from "../lib/webhooks/ports.ts";
import { createDeliveryWorker } from "../lib/worker/bind.ts";
import { deliverAllFrom } from "./flat-loop.ts";
import { enqueueBench, median } from "./shared.ts";

const CONCURRENCY = 64;
const URL = "http://127.0.0.1:9/hook";

export interface LayerCost {
  /** CPU µs per delivery: the flat loop, the worker, and the difference (medians). */
  flatUs: number;
  workerUs: number;
  layersUs: number;
}

/** An answer as small as the sink's, made here instead of on a socket. */
const answer: typeof fetch = Object.assign(
  async () => new Response("ok", { status: 200, headers: { "content-length": "2" } }),
  { preconnect: fetch.preconnect },
);

async function filled(jobs: number): Promise<Store> {
  const store = openSqliteStore(":memory:");
  await store.webhooks.create({ name: "sink", url: URL });
  await enqueueBench(store, jobs);
  return store;
}

/** CPU µs per delivery of `deliver` over a fresh store of `jobs` deliveries. */
async function cpuPerDelivery(jobs: number, deliver: (store: Store) => Promise<void>) {
  const store = await filled(jobs);
  try {
    const before = process.cpuUsage();
    await deliver(store);
    const used = process.cpuUsage(before);
    const { successful } = await store.queue.stats();
    if (successful !== jobs) throw new Error(`only ${successful} of ${jobs} delivered`);
    return (used.user + used.system) / jobs;
  } finally {
    await store.close();
  }
}

function worker(store: Store): Promise<void> {
  const config = {
    timeoutMs: 10_000,
    maxAttempts: 1,
    allowList: parseAllowList("127.0.0.1"),
    leaseMs: 40_000,
    concurrency: CONCURRENCY,
    prefetch: 4 * CONCURRENCY,
    retryBaseMs: 1000,
    retryMaxMs: 60_000,
  };
  return createDeliveryWorker({ store, config, fetch: answer }).runOnce();
}

export async function layerCostPerDelivery(jobs: number, rounds = 5): Promise<LayerCost> {
  // One round first, not counted: both paths compiled by the JIT before anything is measured.
  await cpuPerDelivery(Math.min(jobs, 5000), worker);
  await cpuPerDelivery(Math.min(jobs, 5000), async (store) => {
    await deliverAllFrom(store, CONCURRENCY, answer);
  });
  const flat: number[] = [];
  const ours: number[] = [];
  const layers: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const f = await cpuPerDelivery(jobs, async (store) => {
      await deliverAllFrom(store, CONCURRENCY, answer);
    });
    const w = await cpuPerDelivery(jobs, worker);
    flat.push(f);
    ours.push(w);
    layers.push(w - f);
  }
  return { flatUs: median(flat), workerUs: median(ours), layersUs: median(layers) };
}

if (import.meta.main) {
  const cost = await layerCostPerDelivery(Number(process.argv[2] ?? 20_000));
  console.log(
    `flat ${cost.flatUs.toFixed(1)} µs, worker ${cost.workerUs.toFixed(1)} µs, layers ${cost.layersUs.toFixed(1)} µs per delivery`,
  );
}
