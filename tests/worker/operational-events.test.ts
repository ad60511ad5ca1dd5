import { afterEach, beforeEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { createApp } from "../../lib/app/create-app.ts";
import { createMemoryLogger } from "../../lib/log.ts";
import { openPostgresStore } from "../../lib/store/postgres/store.ts";
import { openSqliteStore } from "../../lib/store/sqlite/store.ts";
import { disabledEvent } from "../../lib/webhooks/events/operational-events.ts";
import { createMetrics } from "../../lib/webhooks/observe/metrics.ts";
import type { AutoDisableSettings } from "../../lib/webhooks/policy/webhook-health.ts";
import type { Store } from "../../lib/webhooks/ports.ts";
import { createDeliveryWorker } from "../../lib/worker/bind.ts";
import { change } from "../fakes/change.ts";
import { jsonLogLines } from "../fakes/json-log.ts";
import { describePostgres, usePostgresCluster } from "../fakes/postgres-cluster.ts";
import { family, parsePrometheusText } from "../fakes/prometheus-text.ts";
import { tempDirs } from "../fakes/temp-dirs.ts";
import { loopbackWorkerConfig } from "../fakes/test-worker.ts";
import { type FakeEndpoint, startFakeEndpoint } from "../fakes/webhook-endpoint.ts";
import { spawnWorker } from "../fakes/worker-process.ts";

// A throwaway PostgreSQL cluster starts for the second suite.
setDefaultTimeout(60_000);

const temporaryDirectory = tempDirs("operational-events-");
// The first failed delivery of a webhook disables it ("failing"); a 410 does at once ("gone").
const DISABLE_AT_ONCE: AutoDisableSettings = {
  enabled: true,
  failingForMs: 0,
  minFailedDeliveries: 1,
  onGone: true,
};

let store: Store;
const endpoints: FakeEndpoint[] = [];
afterEach(async () => {
  for (const endpoint of endpoints.splice(0)) await endpoint.stop();
  await store?.close();
});

function endpoint(status: number): FakeEndpoint {
  const started = startFakeEndpoint(() => new Response("", { status }));
  endpoints.push(started);
  return started;
}

function worker(
  options: {
    logger?: ReturnType<typeof createMemoryLogger>;
    metrics?: ReturnType<typeof createMetrics>;
  } = {},
) {
  return createDeliveryWorker({
    store,
    logger: options.logger,
    autoDisable: DISABLE_AT_ONCE,
    onAutoDisabled: options.metrics
      ? (kind) => options.metrics?.observeAutoDisable(kind)
      : undefined,
    config: loopbackWorkerConfig({ concurrency: 2 }),
  });
}

/** Runs the worker until nothing is due and no event waits to be fanned out. */
async function drain(w: ReturnType<typeof worker>): Promise<void> {
  for (let round = 0; round < 10; round++) {
    await w.runOnce();
    await w.relay.idle();
    const due = await store.queue.dueSummary(Date.now());
    if (due.count === 0 && !(await store.events.hasPending())) return;
  }
  throw new Error("Still delivering after 10 rounds");
}

const item = { sku: "A-1", name: "Bolt", quantity: 3 };
/** Item 1 created by admin, now: the change every test here enqueues. */
const created = () =>
  change({
    username: "admin",
    requestId: "r-1",
    timestamp: new Date(),
    data: { id: 1, ...item },
    postchange: { id: 1, ...item },
  });
const bodies = (e: FakeEndpoint) => e.requests.map((r) => JSON.parse(r.body));

/** The events over real HTTP through a real worker, on a store `open` makes fresh. */
function describeEvents(name: string, open: () => Promise<Store>): void {
  describe(name, () => {
    beforeEach(async () => {
      store = await open();
    });

    test("a webhook disabled on a 410 and its delivery exhausted: the subscriber gets both events, once", async () => {
      const gone = endpoint(410);
      const ops = endpoint(200);
      const everything = endpoint(200);
      const dead = await store.webhooks.create({
        name: "dead",
        url: `${gone.url}/h`,
        events: ["*"],
      });
      await store.webhooks.create({
        name: "ops",
        url: `${ops.url}/ops`,
        events: ["webhook.disabled", "delivery.exhausted"],
      });
      // "*" is the item events only: this one gets the change and nothing operational.
      await store.webhooks.create({ name: "all", url: `${everything.url}/all`, events: ["*"] });
      const logger = createMemoryLogger();
      const w = worker({ logger });
      await store.queue.enqueue(created());
      await drain(w);

      expect(gone.requests).toHaveLength(1);
      expect(bodies(everything).map((b) => b.event)).toEqual(["created"]);
      const received = bodies(ops).sort((a, b) => a.event.localeCompare(b.event));
      expect(received.map((b) => [b.event, b.model, b.username])).toEqual([
        ["disabled", "webhook", "worker"],
        ["exhausted", "delivery", "worker"],
      ]);
      const [disabled, exhausted] = received;
      expect(disabled.data).toEqual({
        id: dead.id,
        name: "dead",
        url: `${gone.url}/h`,
        reason: "Disabled automatically: the endpoint answered 410 Gone",
        reason_kind: "gone",
        disabled_at: expect.any(String),
      });
      const [deadDelivery] = await store.queue.list({ webhookId: dead.id });
      expect(exhausted.data).toEqual({
        id: deadDelivery?.id,
        message_id: deadDelivery?.messageId,
        event: "item.created",
        webhook_id: dead.id,
        webhook_name: "dead",
        attempts: 1,
        last_status: 410,
        last_error: expect.stringContaining("410"),
        object_model: "item",
        object_id: 1,
      });
      expect(ops.requests.map((r) => r.headers["webhook-id"])).toHaveLength(2);
      // One warn line with the reason.
      expect(logger.lines.filter((line) => line.startsWith("warn Webhook"))).toEqual([
        'warn Webhook "dead": Disabled automatically: the endpoint answered 410 Gone',
      ]);
    });

    test("a webhook disabled by hand (CLI, admin, API) is announced too, as manual", async () => {
      const ops = endpoint(200);
      const crm = await store.webhooks.create({ name: "crm", url: "https://crm.example/h" });
      await store.webhooks.create({
        name: "ops",
        url: `${ops.url}/ops`,
        events: ["webhook.disabled"],
      });
      await store.webhooks.update(crm.id, { enabled: false, disabledReason: "disabled by hand" });
      await drain(worker());
      expect(
        bodies(ops).map((b) => [b.event, b.data.name, b.data.reason, b.data.reason_kind]),
      ).toEqual([["disabled", "crm", "disabled by hand", "manual"]]);
    });

    test("an exhausted delivery of delivery.exhausted announces nothing more, and the webhook an event is about never gets it", async () => {
      const failing = endpoint(500);
      const broken = endpoint(500);
      const ops = endpoint(200);
      // Subscribed to its own kind of event and failing: its own exhausted deliveries must not feed it.
      await store.webhooks.create({
        name: "broken-ops",
        url: `${broken.url}/broken`,
        events: ["item.created", "delivery.exhausted"],
      });
      await store.webhooks.create({
        name: "ops",
        url: `${ops.url}/ops`,
        events: ["delivery.exhausted"],
      });
      await store.webhooks.create({
        name: "crm",
        url: `${failing.url}/crm`,
        events: ["item.created"],
      });
      const w = createDeliveryWorker({
        store,
        autoDisable: { ...DISABLE_AT_ONCE, enabled: false },
        config: loopbackWorkerConfig({ concurrency: 2 }),
      });
      await store.queue.enqueue(created());
      await drain(w);

      // crm's delivery exhausted → ops and broken-ops; broken-ops' item delivery exhausted → ops only
      // (never itself); broken-ops' delivery.exhausted delivery exhausted → nothing.
      const about = (e: FakeEndpoint) =>
        bodies(e)
          .filter((b) => b.event === "exhausted")
          .map((b) => b.data.webhook_name)
          .sort();
      expect(about(ops)).toEqual(["broken-ops", "crm"]);
      expect(about(broken)).toEqual(["crm"]);
      const stats = await store.queue.stats();
      expect(stats).toMatchObject({ queued: 0, delivering: 0, successful: 2, failed: 3 });
      expect(await store.events.hasPending()).toBe(false);
    });
  });
}

describeEvents("SQLite", async () => openSqliteStore(join(temporaryDirectory(), "app.db")));

describePostgres("operational events", () => {
  const pg = usePostgresCluster();
  describeEvents("PostgreSQL", async () => openPostgresStore(await pg.cluster.createDatabase()));
});

describe("metrics", () => {
  beforeEach(() => {
    store = openSqliteStore(join(temporaryDirectory(), "app.db"));
  });

  test("/metrics: disabled webhooks by reason, and automatic disables counted by the app and the worker", async () => {
    const app = createApp({ store, config: { adminToken: null } });
    const scrape = async () => parsePrometheusText(await (await app.request("/metrics")).text());
    const baseline = await scrape();
    expect(family(baseline, "webhook_auto_disabled_total")).toEqual({
      'webhook_auto_disabled_total{reason="failing"}': 0,
      'webhook_auto_disabled_total{reason="gone"}': 0,
    });

    const gone = endpoint(410);
    const failing = endpoint(500);
    await store.webhooks.create({ name: "gone", url: `${gone.url}/h`, events: ["*"] });
    await store.webhooks.create({ name: "down", url: `${failing.url}/h`, events: ["*"] });
    const paused = await store.webhooks.create({ name: "paused", url: `${gone.url}/p` });
    await store.webhooks.update(paused.id, { enabled: false, disabledReason: "Paused by Ana" });
    const metrics = createMetrics({
      source: {
        stats: () => store.queue.stats(),
        dueSummary: (at) => store.queue.dueSummary(at),
        workers: () => store.workers.list(),
        webhooks: () => store.webhooks.list(),
      },
    });
    const w = worker({ metrics });
    await store.queue.enqueue(created());
    await drain(w);

    const expected = {
      disabled: {
        'webhook_disabled_webhooks{reason="failing"}': 1,
        'webhook_disabled_webhooks{reason="gone"}': 1,
        'webhook_disabled_webhooks{reason="manual"}': 1,
      },
      counted: {
        'webhook_auto_disabled_total{reason="failing"}': 1,
        'webhook_auto_disabled_total{reason="gone"}': 1,
      },
    };
    const after = await scrape();
    expect(family(after, "webhook_disabled_webhooks")).toEqual(expected.disabled);
    expect(family(after, "webhook_auto_disabled_total")).toEqual(expected.counted);
    // Counted once: another scrape adds nothing.
    expect(family(await scrape(), "webhook_auto_disabled_total")).toEqual(expected.counted);
    const workerSamples = parsePrometheusText(await metrics.render());
    expect(family(workerSamples, "webhook_disabled_webhooks")).toEqual(expected.disabled);
    expect(family(workerSamples, "webhook_auto_disabled_total")).toEqual(expected.counted);
  });
});

describe("worker process", () => {
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  test("bun run worker disables a webhook on a 410: one warn line, webhook.disabled sent, --metrics-port counts it", async () => {
    const path = join(temporaryDirectory(), "app.db");
    store = openSqliteStore(path);
    const gone = endpoint(410);
    const ops = endpoint(200);
    await store.webhooks.create({ name: "dead", url: `${gone.url}/h` });
    await store.webhooks.create({
      name: "ops",
      url: `${ops.url}/ops`,
      events: ["webhook.disabled"],
    });
    await store.queue.enqueue(created());
    const child = spawnWorker(path, {
      env: { LOG_FORMAT: "json" },
      args: ["--metrics-port", "0"],
      cleanups,
    });
    const log = jsonLogLines(child.stderr, cleanups);
    const metricsUrl = String(
      (await log.find(({ msg }) => msg.startsWith("Metrics on"))).msg,
    ).slice("Metrics on ".length);
    const warned = await log.find(({ msg }) => msg.startsWith("Webhook"));
    expect([warned.level, warned.msg]).toEqual([
      "warn",
      'Webhook "dead": Disabled automatically: the endpoint answered 410 Gone',
    ]);
    await ops.waitForRequests(1);
    expect(JSON.parse(ops.requests[0]?.body ?? "").data).toMatchObject({
      name: "dead",
      reason_kind: "gone",
    });
    // Disabled by hand in another process while this worker idles: announced within 5 s.
    const crm = await store.webhooks.create({ name: "crm", url: `${gone.url}/crm`, events: [] });
    await store.webhooks.update(crm.id, { enabled: false, disabledReason: "disabled by hand" });
    await ops.waitForRequests(2);
    expect(JSON.parse(ops.requests[1]?.body ?? "").data).toMatchObject({
      name: "crm",
      reason_kind: "manual",
    });
    const samples = parsePrometheusText(await (await fetch(metricsUrl)).text());
    expect(family(samples, "webhook_auto_disabled_total")).toEqual({
      'webhook_auto_disabled_total{reason="failing"}': 0,
      'webhook_auto_disabled_total{reason="gone"}': 1,
    });
    expect(family(samples, "webhook_disabled_webhooks")).toEqual({
      'webhook_disabled_webhooks{reason="failing"}': 0,
      'webhook_disabled_webhooks{reason="gone"}': 1,
      'webhook_disabled_webhooks{reason="manual"}': 1,
    });
    child.kill("SIGTERM");
    expect(await child.exited).toBe(0);
  });
});

test("disabledEvent() tells other receivers the webhook's URL with its password masked", () => {
  const event = disabledEvent(
    { id: 3, name: "crm", url: "https://crm:s3cret@crm.example/in" },
    { reason: "HTTP 410 Gone", kind: "gone", at: Date.UTC(2030, 0, 1) },
  );
  expect(JSON.parse(event.data)).toMatchObject({ url: "https://crm:***@crm.example/in" });
});
