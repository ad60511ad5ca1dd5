import { afterEach, expect, test } from "bun:test";
import type { Outcome } from "../../lib/webhooks/model.ts";
import { createMetrics } from "../../lib/webhooks/observe/metrics.ts";
import type { Store } from "../../lib/webhooks/ports.ts";
import { metricsHooks } from "../../lib/worker/metrics-hooks.ts";
import { itemChange } from "../fakes/change.ts";
import { attemptRecord } from "../fakes/delivery.ts";
import { family, parsePrometheusText } from "../fakes/prometheus-text.ts";
import { openSqliteDb } from "../fakes/sqlite-db.ts";

const T0 = Date.UTC(2025, 0, 1);
const stores: Store[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

test("metricsHooks() counts each attempt the worker made, applied or discarded, and each failed store call", async () => {
  const { store } = openSqliteDb({ now: () => T0 });
  stores.push(store);
  await store.webhooks.create({ name: "busy", url: "https://example.com/b" });
  await store.queue.enqueue(itemChange(1));
  const [claim] = await store.queue.claim({ workerId: "w1", limit: 1, leaseMs: 60_000, now: T0 });
  if (!claim) throw new Error("nothing to claim");
  const metrics = createMetrics({
    source: {
      stats: () => store.queue.stats(),
      dueSummary: async () => ({ count: 0, oldestDueAt: null }),
      workers: () => store.workers.list(),
    },
  });
  const retry: Outcome = { state: "queued", nextAttemptAt: T0 + 120_000 };
  const hooks = metricsHooks(metrics);
  hooks.onFinished(claim, { record: attemptRecord(200), outcome: { state: "successful" } }, true);
  hooks.onFinished(claim, { record: attemptRecord(null), outcome: retry }, false);
  hooks.onError(new Error("database is locked"), { phase: "claim" });
  hooks.onError(new Error("connection reset"), { phase: "deliver" });
  const samples = parsePrometheusText(await metrics.render());
  expect(samples.get('webhook_attempts_total{outcome="2xx"}')).toBe(1);
  expect(samples.get('webhook_attempts_total{outcome="timeout"}')).toBe(1);
  // A failed request is an attempt, not a store error.
  expect(family(samples, "webhook_worker_store_errors_total")).toEqual({
    'webhook_worker_store_errors_total{phase="claim"}': 1,
    'webhook_worker_store_errors_total{phase="finish"}': 0,
    'webhook_worker_store_errors_total{phase="release"}': 0,
    'webhook_worker_store_errors_total{phase="wait"}': 0,
    'webhook_worker_store_errors_total{phase="heartbeat"}': 0,
  });
});
