import { describe, expect, test } from "bun:test";
import type { AttemptRecord, Outcome } from "../../lib/webhooks/model.ts";
import { itemChange } from "../fakes/change.ts";
import { family, parsePrometheusText } from "../fakes/prometheus-text.ts";
import { T0, testApp, useApp } from "./harness.ts";

const TOKEN = "test-admin-token-0123456789";
let t = useApp();

function change(n: number) {
  return itemChange(n, { event: "item.created", data: { id: n }, timestamp: T0 });
}

/** Claims up to `limit` due deliveries and finishes each with the next status in `statuses`. */
async function attempt(statuses: Array<number | null>, options: { leaseMs?: number } = {}) {
  const claims = await t.store.queue.claim({
    workerId: "w1",
    limit: statuses.length,
    leaseMs: options.leaseMs ?? 60_000,
    now: t.clock.now.getTime(),
  });
  for (const [i, claim] of claims.entries()) {
    const statusCode = statuses[i] ?? null;
    const ok = statusCode !== null && statusCode < 300;
    const record: AttemptRecord = {
      startedAt: t.clock.now.getTime(),
      durationMs: 30 + i,
      statusCode,
      outcome: ok ? "success" : statusCode === null ? "timeout" : "http_error",
      error: ok ? null : "no",
      responseHeaders: null,
      responseBody: null,
    };
    const outcome: Outcome = ok ? { state: "successful" } : { state: "failed" };
    await t.store.queue.finish(claim, record, outcome);
  }
}

async function scrape(headers: HeadersInit = {}) {
  const response = await t.client.request("/metrics", { headers });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toStartWith("text/plain; version=0.0.4");
  return parsePrometheusText(await response.text());
}

describe("GET /metrics on the app", () => {
  test("reports deliveries by state, the due backlog and workers as the database holds them", async () => {
    const hook = await t.store.webhooks.create({ name: "a", url: "http://a.example/" });
    const off = await t.store.webhooks.create({ name: "b", url: "http://b.example/" });
    for (let n = 1; n <= 5; n++) await t.store.queue.enqueue(change(n)); // 5 each
    await t.store.webhooks.update(off.id, { enabled: false });
    await attempt([200, 500]);
    await attempt([null], { leaseMs: 10_000 }); // its worker will look dead in 10 s
    await t.store.workers.heartbeat({
      id: "live",
      host: "h",
      pid: 1,
      version: "0.1.0",
      startedAt: T0.getTime(),
      lastSeenAt: T0.getTime() + 20_000,
      inFlight: 0,
      concurrency: 4,
    });
    await t.store.workers.heartbeat({
      id: "gone",
      host: "h",
      pid: 2,
      version: "0.1.0",
      startedAt: T0.getTime(),
      lastSeenAt: T0.getTime(),
      inFlight: 1,
      concurrency: 4,
    });
    await t.store.queue.claim({
      workerId: "w2",
      limit: 1,
      leaseMs: 10_000,
      now: T0.getTime(),
    });
    t.clock.now = new Date(T0.getTime() + 30_000);
    const samples = await scrape();

    const stats = await t.store.queue.stats();
    expect(family(samples, "webhook_deliveries")).toEqual({
      'webhook_deliveries{state="queued"}': stats.queued,
      'webhook_deliveries{state="delivering"}': stats.delivering,
      'webhook_deliveries{state="successful"}': stats.successful,
      'webhook_deliveries{state="failed"}': stats.failed,
    });
    expect(stats).toEqual({ queued: 6, delivering: 1, successful: 1, failed: 2 });
    // Due: hook a's 1 queued delivery left and the 1 expired lease; not b's 5 (disabled).
    const due = await t.store.queue.dueSummary(T0.getTime() + 30_000);
    expect(due).toEqual({ count: 2, oldestDueAt: T0.getTime() });
    expect(samples.get("webhook_deliveries_due")).toBe(due.count);
    expect(samples.get("webhook_oldest_due_delivery_age_seconds")).toBe(30);
    expect(family(samples, "webhook_workers")).toEqual({
      'webhook_workers{status="live"}': 1,
      'webhook_workers{status="stale"}': 1,
    });
    expect(hook.enabled).toBe(true);
  });

  test("counts every attempt recorded in the database after the first scrape, by outcome", async () => {
    await t.store.webhooks.create({ name: "a", url: "http://a.example/" });
    for (let n = 1; n <= 6; n++) await t.store.queue.enqueue(change(n));
    await attempt([200]); // before the first scrape: not counted
    const first = await scrape();
    expect(first.get('webhook_attempts_total{outcome="2xx"}')).toBe(0);
    await attempt([200, 204, 503, 404, null]);
    const samples = await scrape();
    const recorded = await t.store.queue.attemptsAfter(0, 100);
    expect(recorded).toHaveLength(6);
    expect(family(samples, "webhook_attempts_total")).toMatchObject({
      'webhook_attempts_total{outcome="2xx"}': 2,
      'webhook_attempts_total{outcome="4xx"}': 1,
      'webhook_attempts_total{outcome="5xx"}': 1,
      'webhook_attempts_total{outcome="timeout"}': 1,
      'webhook_attempts_total{outcome="network_error"}': 0,
    });
    expect(samples.get("webhook_attempt_duration_seconds_count")).toBe(5);
    const seconds = recorded.slice(1).reduce((sum, a) => sum + a.durationMs / 1000, 0);
    expect(samples.get("webhook_attempt_duration_seconds_sum")).toBeCloseTo(seconds, 9);
    // A scrape with nothing new counts nothing twice.
    expect((await scrape()).get("webhook_attempt_duration_seconds_count")).toBe(5);
  });

  test("follows the ADMIN_TOKEN rule: 401 without the token, metrics with it", async () => {
    await t.store.close();
    t = testApp({ adminToken: TOKEN });
    const denied = await t.client.request("/metrics");
    expect(denied.status).toBe(401);
    expect(denied.headers.get("www-authenticate")).toContain("Bearer");
    expect(await denied.text()).not.toContain("webhook_");
    const wrong = await t.client.request("/metrics", {
      headers: { authorization: "Bearer wrong-token-0123456789" },
    });
    expect(wrong.status).toBe(401);
    const samples = await scrape({ authorization: `Bearer ${TOKEN}` });
    expect(samples.get("webhook_deliveries_due")).toBe(0);
  });
});
