import { describe, expect, test } from "bun:test";
import { register as globalRegistry } from "prom-client";
import { dueSummary } from "../../../lib/store/sqlite/queue/due.ts";
import { attemptsAfter, lastAttemptId } from "../../../lib/store/sqlite/queue/listing.ts";
import type { AttemptOutcome } from "../../../lib/webhooks/model.ts";
import {
  type AttemptOutcomeLabel,
  attemptOutcomeLabel,
  createMetrics,
  type MetricsSource,
} from "../../../lib/webhooks/observe/metrics.ts";
import type { Store } from "../../../lib/webhooks/ports.ts";
import { itemChange } from "../../fakes/change.ts";
import { attemptRecord, completeClaim } from "../../fakes/delivery.ts";
import { createFakeClock } from "../../fakes/fake-clock.ts";
import { family, parsePrometheusText } from "../../fakes/prometheus-text.ts";
import { openSqliteDb, useSqliteDbs } from "../../fakes/sqlite-db.ts";

const T0 = Date.UTC(2025, 0, 1);
const INTERVAL = 5_000;

describe("attemptOutcomeLabel()", () => {
  test.each([
    ["success", 200, "2xx"],
    ["success", 204, "2xx"],
    ["http_error", 302, "3xx"],
    ["http_error", 404, "4xx"],
    ["http_error", 429, "4xx"],
    ["http_error", 503, "5xx"],
    ["timeout", null, "timeout"],
    ["network_error", null, "network_error"],
    ["blocked", null, "blocked"],
    ["lease_expired", null, "lease_expired"],
    ["http_error", null, "other"],
  ] as Array<[AttemptOutcome, number | null, AttemptOutcomeLabel]>)(
    "labels %s with status %p as %s",
    (outcome, statusCode, label) => {
      expect(attemptOutcomeLabel({ outcome, statusCode })).toBe(label);
    },
  );
});

describe("createMetrics()", () => {
  const openDb = useSqliteDbs();

  function setup() {
    const clock = createFakeClock(T0);
    const { db, store } = openDb({ now: clock.now });
    const source = (options: { followAttempts?: boolean } = {}): MetricsSource => ({
      stats: () => store.queue.stats(),
      dueSummary: async (now) => dueSummary(db, now),
      workers: () => store.workers.list(),
      attempts: options.followAttempts
        ? {
            lastId: async () => lastAttemptId(db),
            after: async (afterId, limit) => attemptsAfter(db, afterId, limit),
          }
        : undefined,
    });
    return { clock, db, store, source };
  }

  /** Deliveries in every state, a disabled webhook's backlog, an expired lease, two workers. */
  async function busyDatabase(clock: ReturnType<typeof createFakeClock>, store: Store) {
    const live = await store.webhooks.create({ name: "live", url: "https://example.com/a" });
    const off = await store.webhooks.create({ name: "off", url: "https://example.com/b" });
    for (let n = 0; n < 10; n++) await store.queue.enqueue(itemChange(n));
    await store.webhooks.update(off.id, { enabled: false });
    const claims = await store.queue.claim({
      workerId: "w1",
      limit: 6,
      leaseMs: 30_000,
      now: clock.now(),
    });
    const results = [200, 200, 500, 404];
    for (const [i, status] of results.entries()) {
      const claim = claims[i];
      if (claim)
        await completeClaim(store, claim, attemptRecord(status, { durationMs: 20 * (i + 1) }));
    }
    // Two claims stay in flight; the clock moves past their lease: an expired lease is due.
    clock.advance(40_000);
    await store.workers.heartbeat(worker("alive", clock.now() - 1_000));
    await store.workers.heartbeat(worker("dead", clock.now() - 60_000));
    return { live, off };
  }

  function worker(id: string, lastSeenAt: number) {
    return {
      id,
      host: "h",
      pid: 1,
      version: "0.1.0",
      startedAt: T0,
      lastSeenAt,
      inFlight: 0,
      concurrency: 4,
    };
  }

  test("render() reports deliveries by state, the due backlog, its age and workers as the database holds them", async () => {
    const { clock, db, store, source } = setup();
    await busyDatabase(clock, store);
    const metrics = createMetrics({
      source: source(),
      now: clock.now,
      heartbeatIntervalMs: INTERVAL,
    });
    const samples = parsePrometheusText(await metrics.render());

    const byState = Object.fromEntries(
      db
        .query<{ state: string; n: number }, []>(
          "SELECT state, count(*) AS n FROM deliveries GROUP BY state",
        )
        .all()
        .map((row) => [`webhook_deliveries{state="${row.state}"}`, row.n]),
    );
    expect(family(samples, "webhook_deliveries")).toEqual({
      'webhook_deliveries{state="delivering"}': 0,
      'webhook_deliveries{state="failed"}': 0,
      'webhook_deliveries{state="queued"}': 0,
      'webhook_deliveries{state="successful"}': 0,
      ...byState,
    });
    expect(byState).toEqual({
      'webhook_deliveries{state="queued"}': 14,
      'webhook_deliveries{state="delivering"}': 2,
      'webhook_deliveries{state="successful"}': 2,
      'webhook_deliveries{state="failed"}': 2,
    });

    // Due: the live webhook's 4 unclaimed deliveries and the 2 expired leases, not the
    // disabled webhook's 10. The oldest has been due since it was enqueued at T0.
    const due = db
      .query<{ n: number; oldest: number }, [number]>(
        `SELECT count(*) AS n, min(t) AS oldest FROM (
           SELECT d.next_attempt_at AS t FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
           WHERE d.state = 'queued' AND w.enabled = 1 AND d.next_attempt_at <= ?1
           UNION ALL
           SELECT lease_expires_at FROM deliveries WHERE state = 'delivering' AND lease_expires_at <= ?1)`,
      )
      .get(clock.now());
    expect(due).toEqual({ n: 6, oldest: T0 });
    expect(samples.get("webhook_deliveries_due")).toBe(due?.n);
    expect(samples.get("webhook_oldest_due_delivery_age_seconds")).toBe(40);
    expect(family(samples, "webhook_workers")).toEqual({
      'webhook_workers{status="live"}': 1,
      'webhook_workers{status="stale"}': 1,
    });
  });

  test("observeStoreError() counts the worker's failed database calls by phase", async () => {
    const { source } = setup();
    const metrics = createMetrics({ source: source() });
    metrics.observeStoreError("wait");
    metrics.observeStoreError("wait");
    metrics.observeStoreError("claim");
    const samples = parsePrometheusText(await metrics.render());
    expect(family(samples, "webhook_worker_store_errors_total")).toEqual({
      'webhook_worker_store_errors_total{phase="claim"}': 1,
      'webhook_worker_store_errors_total{phase="finish"}': 0,
      'webhook_worker_store_errors_total{phase="release"}': 0,
      'webhook_worker_store_errors_total{phase="wait"}': 2,
      'webhook_worker_store_errors_total{phase="heartbeat"}': 0,
    });
  });

  test("observeAttempt() counts attempts by outcome and their durations in seconds", async () => {
    const { source } = setup();
    const metrics = createMetrics({ source: source() });
    metrics.observeAttempt({ outcome: "success", statusCode: 200, durationMs: 8 });
    metrics.observeAttempt({ outcome: "success", statusCode: 201, durationMs: 40 });
    metrics.observeAttempt({ outcome: "http_error", statusCode: 503, durationMs: 1_200 });
    metrics.observeAttempt({ outcome: "timeout", statusCode: null, durationMs: 10_000 });
    metrics.observeAttempt({ outcome: "blocked", statusCode: null, durationMs: 0.3 });
    const samples = parsePrometheusText(await metrics.render());
    expect(family(samples, "webhook_attempts_total")).toEqual({
      'webhook_attempts_total{outcome="2xx"}': 2,
      'webhook_attempts_total{outcome="3xx"}': 0,
      'webhook_attempts_total{outcome="4xx"}': 0,
      'webhook_attempts_total{outcome="5xx"}': 1,
      'webhook_attempts_total{outcome="timeout"}': 1,
      'webhook_attempts_total{outcome="network_error"}': 0,
      'webhook_attempts_total{outcome="template_error"}': 0,
      'webhook_attempts_total{outcome="blocked"}': 1,
      'webhook_attempts_total{outcome="lease_expired"}': 0,
    });
    expect(samples.get('webhook_attempt_duration_seconds_bucket{le="0.005"}')).toBe(1);
    expect(samples.get('webhook_attempt_duration_seconds_bucket{le="0.01"}')).toBe(2);
    expect(samples.get('webhook_attempt_duration_seconds_bucket{le="0.05"}')).toBe(3);
    expect(samples.get('webhook_attempt_duration_seconds_bucket{le="2.5"}')).toBe(4);
    expect(samples.get('webhook_attempt_duration_seconds_bucket{le="10"}')).toBe(5);
    expect(samples.get('webhook_attempt_duration_seconds_bucket{le="+Inf"}')).toBe(5);
    expect(samples.get("webhook_attempt_duration_seconds_count")).toBe(5);
    expect(samples.get("webhook_attempt_duration_seconds_sum")).toBeCloseTo(11.2483, 6);
  });

  test("following the attempts table counts each attempt recorded after start once, whoever made it", async () => {
    const { clock, db, store, source } = setup();
    await busyDatabase(clock, store);
    const metrics = createMetrics({ source: source({ followAttempts: true }), now: clock.now });
    // Attempts from before this process started are history, not counted.
    const first = parsePrometheusText(await metrics.render());
    expect(first.get("webhook_attempt_duration_seconds_count")).toBe(0);

    const claims = await store.queue.claim({
      workerId: "w2",
      limit: 4,
      leaseMs: 30_000,
      now: clock.now(),
    });
    const statuses = [200, 500, 503, null];
    for (const [i, claim] of claims.entries()) {
      const status = statuses[i];
      if (status === undefined) throw new Error("more claims than statuses");
      await completeClaim(store, claim, attemptRecord(status, { durationMs: 100 }));
    }
    // The two expired leases are recorded as lease_expired attempts when claimed again above.
    const rows = db
      .query<{ outcome: string; status_code: number | null; n: number }, [number]>(
        `SELECT outcome, status_code, count(*) AS n FROM attempts WHERE id > ?
         GROUP BY outcome, status_code`,
      )
      .all(4);
    const expected: Record<string, number> = {};
    for (const row of rows) {
      const label = attemptOutcomeLabel({
        outcome: row.outcome as AttemptOutcome,
        statusCode: row.status_code,
      });
      const key = `webhook_attempts_total{outcome="${label}"}`;
      expected[key] = (expected[key] ?? 0) + row.n;
    }
    const second = parsePrometheusText(await metrics.render());
    const counted = Object.fromEntries(
      Object.entries(family(second, "webhook_attempts_total")).filter(([, n]) => n > 0),
    );
    expect(counted).toEqual(expected);
    expect(Object.values(counted).reduce((a, b) => a + b, 0)).toBe(claims.length + 2);

    const third = parsePrometheusText(await metrics.render());
    expect(family(third, "webhook_attempts_total")).toEqual(
      family(second, "webhook_attempts_total"),
    );
  });

  test("uses a registry of its own, never prom-client's global one", async () => {
    const { source } = setup();
    const a = createMetrics({ source: source() });
    const b = createMetrics({ source: source() });
    a.observeAttempt({ outcome: "success", statusCode: 200, durationMs: 1 });
    expect(
      parsePrometheusText(await b.render()).get("webhook_attempt_duration_seconds_count"),
    ).toBe(0);
    expect(
      parsePrometheusText(await a.render()).get("webhook_attempt_duration_seconds_count"),
    ).toBe(1);
    expect(await globalRegistry.getSingleMetric("webhook_attempts_total")).toBeUndefined();
    expect(a.contentType).toStartWith("text/plain");
  });
});

describe("dueSummary() on SQLite", () => {
  test("counts nothing and has no oldest time on an empty queue", () => {
    const { db } = openSqliteDb();
    expect(dueSummary(db, T0)).toEqual({ count: 0, oldestDueAt: null });
    db.close();
  });

  test("ignores deliveries not yet due", async () => {
    const clock = createFakeClock(T0);
    const { db, store } = openSqliteDb({ now: clock.now });
    await store.webhooks.create({ name: "a", url: "https://example.com/a" });
    await store.queue.enqueue(itemChange(1));
    expect(dueSummary(db, T0 - 1)).toEqual({ count: 0, oldestDueAt: null });
    expect(dueSummary(db, T0)).toEqual({ count: 1, oldestDueAt: T0 });
    await store.close();
  });
});
