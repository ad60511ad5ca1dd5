import { afterEach, describe, expect, test } from "bun:test";
import { createApp } from "../../lib/app/create-app.ts";
import { openPostgresStore } from "../../lib/store/postgres/store.ts";
import { openSqliteStore } from "../../lib/store/sqlite/store.ts";
import { EVENT_CATALOGUE } from "../../lib/webhooks/events/catalogue.ts";
import { failingEvent } from "../../lib/webhooks/events/failing-notices.ts";
import type { Store } from "../../lib/webhooks/ports.ts";
import { createDeliveryWorker } from "../../lib/worker/bind.ts";
import { itemChange } from "../fakes/change.ts";
import { createFakeClock } from "../fakes/fake-clock.ts";
import { describePostgres, usePostgresCluster } from "../fakes/postgres-cluster.ts";
import { family, parsePrometheusText } from "../fakes/prometheus-text.ts";
import { loopbackWorkerConfig } from "../fakes/test-worker.ts";
import { webhookFixture } from "../fakes/webhook.ts";
import { type FakeEndpoint, startFakeEndpoint } from "../fakes/webhook-endpoint.ts";

const T0 = Date.UTC(2030, 0, 1);
const NOTICES = ["webhook.failing", "webhook.recovered"];

/** The failing notice end to end: a real worker, real endpoints, a fake clock, on one store. */
function describeNotices(name: string, open: (now: () => number) => Promise<Store>): void {
  describe(`failing notices on ${name}`, () => {
    const cleanups: Array<() => Promise<void> | void> = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    async function setup() {
      const clock = createFakeClock(T0);
      const store = await open(clock.now);
      cleanups.push(() => store.close());
      const state = { down: true };
      // Down (500) while state.down, then answering 200.
      const flaky: FakeEndpoint = startFakeEndpoint(() =>
        state.down ? new Response("down", { status: 500 }) : new Response("ok"),
      );
      const ops: FakeEndpoint = startFakeEndpoint();
      cleanups.push(
        () => flaky.stop(),
        () => ops.stop(),
      );
      // It names the notices too: it must never get its own.
      const hook = await store.webhooks.create({
        name: "flaky",
        url: `${flaky.url}/in`,
        events: ["*", ...NOTICES],
      });
      await store.webhooks.create({ name: "ops", url: `${ops.url}/ops`, events: NOTICES });
      const newWorker = () =>
        createDeliveryWorker({
          store,
          now: clock.now,
          random: () => 0.5,
          logAttempts: false,
          config: loopbackWorkerConfig({ maxAttempts: null, concurrency: 4 }),
        });
      // Two workers at once: the notice's once-per-run is the database's, not a process's.
      const workers = [newWorker(), newWorker()];
      /**
       * Runs the workers, their event relays included, and moves the clock to the next retry,
       * until `done` holds: as hours pass for workers with nothing else to do.
       */
      async function runUntil(done: () => Promise<boolean>) {
        for (let turn = 0; turn < 100; turn++) {
          await Promise.all(workers.map((w) => w.runOnce()));
          await Promise.all(workers.map((w) => w.relay.idle()));
          await Promise.all(workers.map((w) => w.runOnce()));
          if (await done()) return;
          const next = await store.queue.nextDueAt();
          if (next !== null) clock.advance(Math.max(0, next - clock.now()));
        }
        throw new Error("Never done");
      }
      const attemptsOf = async (id: number) => (await store.queue.get(id))?.delivery.attempts ?? 0;
      const stateOf = async (id: number) => (await store.queue.get(id))?.delivery.state;
      const app = createApp({ store, config: { adminToken: null } });
      /** The app's /metrics: the failing notices open, and counted by event. */
      async function scrape() {
        const samples = parsePrometheusText(await (await app.request("/metrics")).text());
        return {
          ...family(samples, "webhook_failing_notices_open"),
          ...family(samples, "webhook_failing_notices_total"),
        };
      }
      return { store, state, flaky, ops, hook, runUntil, attemptsOf, stateOf, scrape };
    }

    const notices = (e: FakeEndpoint) =>
      e.requests
        .map((r) => JSON.parse(r.body) as { event: string; model: string; data: never })
        .filter((b) => b.model === "webhook");

    test("webhook.failing at a delivery's fourth failed attempt, once per run, then webhook.recovered at the next success, to the other webhook only", async () => {
      const env = await setup();
      const counted = (open: number, failing: number, recovered: number) => ({
        webhook_failing_notices_open: open,
        'webhook_failing_notices_total{event="webhook.failing"}': failing,
        'webhook_failing_notices_total{event="webhook.recovered"}': recovered,
      });
      expect(await env.scrape()).toEqual(counted(0, 0, 0));
      const [first] = await env.store.queue.enqueue(itemChange(1));
      const [second] = await env.store.queue.enqueue(itemChange(2));
      if (first === undefined || second === undefined) throw new Error("Nothing was queued");
      // Both deliveries pass their fourth failed attempt: one notice for the run.
      await env.runUntil(async () => (await env.attemptsOf(second)) >= 5);
      expect(notices(env.ops).map((b) => b.event)).toEqual(["failing"]);
      const failing = JSON.parse(env.ops.requests[0]?.body ?? "{}");
      expect(EVENT_CATALOGUE["webhook.failing"]?.schema.safeParse(failing).success).toBe(true);
      expect(failing.data).toMatchObject({
        id: env.hook.id,
        name: "flaky",
        failing_notice_after: 4,
        delivery_id: first,
        attempt: 4,
        last_status: 500,
      });
      expect(failing.data.next_attempt_at).toBeString();
      expect(await env.scrape()).toEqual(counted(1, 1, 0));

      env.state.down = false;
      await env.runUntil(async () => (await env.stateOf(second)) === "successful");
      expect(await env.stateOf(first)).toBe("successful");
      expect(notices(env.ops).map((b) => b.event)).toEqual(["failing", "recovered"]);
      const recovered = JSON.parse(env.ops.requests[1]?.body ?? "{}");
      expect(EVENT_CATALOGUE["webhook.recovered"]?.schema.safeParse(recovered).success).toBe(true);
      expect(recovered.data).toMatchObject({ id: env.hook.id, name: "flaky" });
      expect(Date.parse(recovered.data.failing_noticed_at)).toBeGreaterThan(T0);
      expect(notices(env.flaky)).toEqual([]);
      expect(await env.scrape()).toEqual(counted(0, 1, 1));

      // A new run announces again.
      env.state.down = true;
      const [third] = await env.store.queue.enqueue(itemChange(3));
      if (third === undefined) throw new Error("Nothing was queued");
      await env.runUntil(async () => (await env.attemptsOf(third)) >= 4);
      expect(notices(env.ops).map((b) => b.event)).toEqual(["failing", "recovered", "failing"]);
      expect(notices(env.flaky)).toEqual([]);
    });

    test("a run announced and recovered between two scrapes of /metrics counts its webhook.failing too", async () => {
      const env = await setup();
      const counted = (failing: number, recovered: number) => ({
        webhook_failing_notices_open: 0,
        'webhook_failing_notices_total{event="webhook.failing"}': failing,
        'webhook_failing_notices_total{event="webhook.recovered"}': recovered,
      });
      expect(await env.scrape()).toEqual(counted(0, 0));
      const [id] = await env.store.queue.enqueue(itemChange(1));
      if (id === undefined) throw new Error("Nothing was queued");
      await env.runUntil(async () => (await env.attemptsOf(id)) >= 4);
      env.state.down = false;
      await env.runUntil(async () => (await env.stateOf(id)) === "successful");
      expect(notices(env.ops).map((b) => b.event)).toEqual(["failing", "recovered"]);
      expect(await env.scrape()).toEqual(counted(1, 1));
      // Counted once: the next scrape finds nothing new.
      expect(await env.scrape()).toEqual(counted(1, 1));
    });

    test("eight deliveries failing at once through two workers: one webhook.failing, one webhook.recovered", async () => {
      const env = await setup();
      const ids: number[] = [];
      for (let n = 1; n <= 8; n++) ids.push(...(await env.store.queue.enqueue(itemChange(n))));
      expect(ids).toHaveLength(8);
      const allAt = async (attempts: number) =>
        (await Promise.all(ids.map(env.attemptsOf))).every((a) => a >= attempts);
      await env.runUntil(() => allAt(5));
      expect(notices(env.ops).map((b) => b.event)).toEqual(["failing"]);
      env.state.down = false;
      const allDone = async () =>
        (await Promise.all(ids.map(env.stateOf))).every((s) => s === "successful");
      await env.runUntil(allDone);
      expect(notices(env.ops).map((b) => b.event)).toEqual(["failing", "recovered"]);
      expect(notices(env.flaky)).toEqual([]);
    });

    test("failing_notice_after: 2 announces at the second failed attempt; 0 never", async () => {
      const env = await setup();
      await env.store.webhooks.update(env.hook.id, { failingNoticeAfter: 2 });
      const [id] = await env.store.queue.enqueue(itemChange(1));
      if (id === undefined) throw new Error("Nothing was queued");
      await env.runUntil(async () => (await env.attemptsOf(id)) >= 2);
      expect(
        notices(env.ops).map((b) => [b.event, (b.data as { attempt: number }).attempt]),
      ).toEqual([["failing", 2]]);
      env.state.down = false;
      await env.runUntil(async () => (await env.stateOf(id)) === "successful");
      await env.store.webhooks.update(env.hook.id, { failingNoticeAfter: 0 });
      env.state.down = true;
      const [next] = await env.store.queue.enqueue(itemChange(2));
      if (next === undefined) throw new Error("Nothing was queued");
      await env.runUntil(async () => (await env.attemptsOf(next)) >= 6);
      expect(notices(env.ops).map((b) => b.event)).toEqual(["failing", "recovered"]);
    });
  });
}

describeNotices("SQLite", async (now) => openSqliteStore(":memory:", { now }));

describePostgres("PostgreSQL", () => {
  const pg = usePostgresCluster();
  describeNotices("PostgreSQL", async (now) =>
    openPostgresStore(await pg.cluster.createDatabase(), { now }),
  );
});

test("failingEvent() is null for a success, another attempt, or a webhook that wants no notice", () => {
  const record = {
    startedAt: 0,
    durationMs: 1,
    statusCode: 500,
    outcome: "http_error" as const,
    error: "HTTP 500",
    responseHeaders: null,
    responseBody: null,
  };
  const claim = (attempt: number, failingNoticeAfter = 4) =>
    ({
      delivery: { id: 7, messageId: "msg_1", event: "item.created" },
      webhook: webhookFixture({ url: "https://u:secret@hooks.example/in", failingNoticeAfter }),
      attempt,
    }) as never;
  const failed = { state: "failed" as const };
  expect(failingEvent({ claim: claim(4), record, outcome: { state: "successful" } })).toBeNull();
  expect(failingEvent({ claim: claim(3), record, outcome: failed })).toBeNull();
  expect(failingEvent({ claim: claim(4, 0), record, outcome: failed })).toBeNull();
  const event = failingEvent({ claim: claim(4), record, outcome: failed });
  expect(event?.event).toBe("webhook.failing");
  expect(JSON.parse(event?.data ?? "{}").url).toBe("https://u:***@hooks.example/in");
});
