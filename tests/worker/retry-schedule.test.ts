import { afterEach, describe, expect, test } from "bun:test";
import { openPostgresStore } from "../../lib/store/postgres/store.ts";
import { openSqliteStore } from "../../lib/store/sqlite/store.ts";
import type { RetrySchedule } from "../../lib/webhooks/policy/retry-schedule.ts";
import type { Store } from "../../lib/webhooks/ports.ts";
import { createDeliveryWorker, type DeliveryWorkerOptions } from "../../lib/worker/bind.ts";
import { change } from "../fakes/change.ts";
import { createFakeClock } from "../fakes/fake-clock.ts";
import { describePostgres, usePostgresCluster } from "../fakes/postgres-cluster.ts";
import { loopbackWorkerConfig } from "../fakes/test-worker.ts";
import { type FakeEndpoint, startFakeEndpoint } from "../fakes/webhook-endpoint.ts";

const T0 = Date.UTC(2030, 0, 1);
const HOUR = 3_600_000;

/** Retry schedules end to end: a real worker, a real endpoint, a fake clock, on one store. */
function describeSchedules(name: string, open: (now: () => number) => Promise<Store>): void {
  describe(`retry schedules on ${name}`, () => {
    const cleanups: Array<() => Promise<void> | void> = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    /** An endpoint down (500) until `downUntil` on the fake clock, then answering 200. */
    async function setup(downUntil: number) {
      const clock = createFakeClock(T0);
      const store = await open(clock.now);
      cleanups.push(() => store.close());
      const endpoint: FakeEndpoint = startFakeEndpoint(() =>
        clock.now() < downUntil ? new Response("down", { status: 500 }) : new Response("ok"),
      );
      cleanups.push(() => endpoint.stop());
      function worker(config: Partial<DeliveryWorkerOptions["config"]> = {}) {
        return createDeliveryWorker({
          store,
          now: clock.now,
          random: () => 0.5, // no jitter
          logAttempts: false,
          config: loopbackWorkerConfig({
            maxAttempts: null,
            retryBaseMs: 10_000,
            retryMaxMs: HOUR,
            ...config,
          }),
        });
      }
      /**
       * Runs the worker whenever the delivery is due until it is no longer queued: the clock
       * jumps to each due time, as a day passes for a worker that has nothing else to do.
       */
      async function runUntilSettled(id: number, config: Partial<DeliveryWorkerOptions["config"]>) {
        for (let turn = 0; turn < 200; turn++) {
          await worker(config).runOnce();
          const shown = await store.queue.get(id);
          if (shown?.delivery.state !== "queued") return shown;
          clock.advance(Math.max(0, shown.delivery.nextAttemptAt - clock.now()));
        }
        throw new Error("The delivery never settled");
      }
      async function deliveryTo(retrySchedule?: RetrySchedule): Promise<number> {
        await store.webhooks.create({
          name: "hook",
          url: `${endpoint.url}/in`,
          ...(retrySchedule === undefined ? {} : { retrySchedule }),
        });
        const [id] = await store.queue.enqueue(change());
        if (id === undefined) throw new Error("Nothing was queued");
        return id;
      }
      return { clock, store, endpoint, runUntilSettled, deliveryTo };
    }

    const sentAt = (env: { endpoint: FakeEndpoint }) =>
      env.endpoint.requests.map((r) => Number(r.headers["webhook-timestamp"]) * 1000 - T0);

    test("a 20-hour outage is delivered on the default schedule without a manual retry", async () => {
      const env = await setup(T0 + 20 * HOUR);
      const id = await env.deliveryTo();
      const shown = await env.runUntilSettled(id, {});
      expect(shown?.delivery).toMatchObject({ state: "successful", attempts: 8 });
      // Svix's schedule: immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h after each.
      const steps = [0, 5_000, 300_000, 1_800_000, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR];
      const expected = steps.map((_, i) => steps.slice(0, i + 1).reduce((a, b) => a + b, 0));
      expect(sentAt(env)).toEqual(expected);
      expect(env.endpoint.requests.map((r) => r.headers["webhook-id"])).toEqual(
        Array(8).fill(env.endpoint.requests[0]?.headers["webhook-id"]),
      );
    });

    test("WEBHOOK_MAX_ATTEMPTS shorter than the schedule fails it early", async () => {
      const env = await setup(T0 + 20 * HOUR);
      const id = await env.deliveryTo("day");
      const shown = await env.runUntilSettled(id, { maxAttempts: 4 });
      expect(shown?.delivery).toMatchObject({ state: "failed", attempts: 4 });
      expect(sentAt(env)).toEqual([0, 5_000, 305_000, 2_105_000]);
    });

    test("short keeps the old doubling; none sends once; a list sends at its delays", async () => {
      const short = await setup(T0 + 20 * HOUR);
      const shortId = await short.deliveryTo("short");
      expect((await short.runUntilSettled(shortId, {}))?.delivery.state).toBe("failed");
      expect(sentAt(short)).toEqual([0, 10_000, 30_000, 70_000, 150_000]);

      const none = await setup(T0 + 20 * HOUR);
      const noneId = await none.deliveryTo("none");
      expect((await none.runUntilSettled(noneId, {}))?.delivery).toMatchObject({
        state: "failed",
        attempts: 1,
      });

      const list = await setup(T0 + 6 * 60_000);
      const listId = await list.deliveryTo([5_000, 5 * 60_000, 30 * 60_000]);
      expect((await list.runUntilSettled(listId, {}))?.delivery.state).toBe("successful");
      expect(sentAt(list)).toEqual([0, 5_000, 305_000, 2_105_000]);
    });

    test("a lease lost at the schedule's last attempt fails the delivery, no cap given", async () => {
      const env = await setup(Number.POSITIVE_INFINITY);
      const id = await env.deliveryTo("none");
      const claim = () =>
        env.store.queue.claim({ workerId: "w", limit: 1, leaseMs: 30_000, now: env.clock.now() });
      expect(await claim()).toHaveLength(1); // the worker dies while sending attempt 1
      env.clock.advance(30_000);
      expect(await claim()).toHaveLength(0);
      expect((await env.store.queue.get(id))?.delivery).toMatchObject({
        state: "failed",
        attempts: 1,
      });
    });
  });
}

describeSchedules("SQLite", async (now) => openSqliteStore(":memory:", { now }));

describePostgres("PostgreSQL", () => {
  const pg = usePostgresCluster();
  describeSchedules("PostgreSQL", async (now) =>
    openPostgresStore(await pg.cluster.createDatabase(), { now }),
  );
});
