import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openPostgresStore } from "../../lib/store/postgres/store.ts";
import { openSqliteStore } from "../../lib/store/sqlite/store.ts";
import type { Store } from "../../lib/webhooks/ports.ts";
import { createDeliveryWorker, type DeliveryWorkerOptions } from "../../lib/worker/bind.ts";
import { change } from "../fakes/change.ts";
import { describePostgres, usePostgresCluster } from "../fakes/postgres-cluster.ts";
import { loopbackWorkerConfig } from "../fakes/test-worker.ts";
import {
  type FakeEndpoint,
  hangFirst,
  type ReceivedRequest,
  type Responder,
  startFakeEndpoint,
} from "../fakes/webhook-endpoint.ts";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const T0 = Date.UTC(2030, 0, 1);
/** The order in which the worker sent a request (answersTaking). */
const SEND_ORDER = "x-test-send-order";

/** Opens the store under test on a fresh database; `another` opens a second connection to it. */
type OpenStores = (now: () => number) => Promise<{ store: Store; another(): Promise<Store> }>;

/**
 * The delivery guarantees without a crash (each delivery sent once, the attempt cap, webhook
 * changes honoured by claims already held), on one store. The clock is fake: the endpoint moves
 * it forward to stand for slow answers and paused processes.
 */
function describeGuarantees(name: string, open: OpenStores): void {
  describe(`delivery guarantees on ${name}`, () => {
    const cleanups: Array<() => Promise<void> | void> = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    async function setup(options: { respond?: Responder } = {}) {
      const clock = { t: T0, now: () => clock.t };
      const { store, another } = await open(clock.now);
      cleanups.push(() => store.close());
      const endpoints: FakeEndpoint[] = [];
      function endpoint(respond?: Responder): FakeEndpoint {
        const started = startFakeEndpoint(respond);
        endpoints.push(started);
        cleanups.push(() => started.stop());
        return started;
      }
      const main = endpoint(options.respond);
      const webhook = await store.webhooks.create({
        name: "hook",
        url: `${main.url}/in`,
        secret: SECRET,
      });
      function worker(
        config: Partial<DeliveryWorkerOptions["config"]> = {},
        overrides: Partial<DeliveryWorkerOptions> = {},
      ) {
        return createDeliveryWorker({
          store,
          now: clock.now,
          random: () => 0.5,
          ...overrides,
          config: loopbackWorkerConfig({
            maxAttempts: 5,
            retryBaseMs: 10_000,
            retryMaxMs: 3_600_000,
            prefetch: 4,
            ...config,
          }),
        });
      }
      async function enqueue(count: number): Promise<number[]> {
        const ids: number[] = [];
        for (let i = 0; i < count; i++) ids.push(...(await store.queue.enqueue(change())));
        return ids;
      }
      async function secondStore(): Promise<Store> {
        const other = await another();
        cleanups.push(() => other.close());
        return other;
      }
      return { clock, store, main, endpoint, webhook, worker, enqueue, secondStore };
    }

    /**
     * Results written so far, and a wait for the n-th: a slow answer moves the fake clock (to
     * its arrival plus its duration) only once the results before it are written, as they
     * would be long before that much real time.
     */
    function resultsWritten() {
      let count = 0;
      let waiters: Array<{ n: number; resolve: () => void }> = [];
      return {
        hooks: {
          onFinished() {
            count++;
            const ready = waiters.filter((w) => w.n <= count);
            waiters = waiters.filter((w) => w.n > count);
            for (const w of ready) w.resolve();
          },
        },
        atLeast(n: number): Promise<void> {
          if (count >= n) return Promise.resolve();
          return new Promise((resolve) => waiters.push({ n, resolve }));
        },
      };
    }

    /**
     * Answers that each take `ms` of fake time from when the worker sent them, several in flight:
     * `fetch` numbers the requests in the order the worker sends them, and `respond` moves the
     * clock to the request's send time (the worker's clock as it stamped `webhook-timestamp`,
     * in whole seconds) plus `ms`, once every request sent before it is answered and its result
     * written. Counting from the arrival instead, or waiting in arrival order, let a request
     * that reached the endpoint after another answer had moved the clock take `ms` more from
     * there: 38 s for a 19 s answer under a 20 s timeout, past its lease, which the worker then
     * took over and sent again. A real request is cut at its timeout, inside its lease.
     */
    function answersTaking(ms: number, clock: () => { t: number }) {
      const written = resultsWritten();
      let sent = 0;
      const fetchInOrder = (input: RequestInfo | URL, init?: RequestInit) => {
        const headers = new Headers(init?.headers);
        headers.set(SEND_ORDER, String(sent++));
        return fetch(input, { ...init, headers });
      };
      return {
        hooks: written.hooks,
        fetch: Object.assign(fetchInOrder, { preconnect: fetch.preconnect }),
        async respond(request: ReceivedRequest): Promise<Response> {
          const sentAt = Number(request.headers["webhook-timestamp"]) * 1000;
          await written.atLeast(Number(request.headers[SEND_ORDER]));
          clock().t = Math.max(clock().t, sentAt + ms);
          return new Response("ok");
        },
      };
    }

    /** How many requests each message id got. */
    function sendsPerMessage(...endpoints: FakeEndpoint[]): number[] {
      const counts = new Map<string, number>();
      for (const request of endpoints.flatMap((e) => e.requests)) {
        const id = request.headers["webhook-id"] ?? "";
        counts.set(id, (counts.get(id) ?? 0) + 1);
      }
      return [...counts.values()];
    }

    test("a slow endpoint behind a short lease and a prefetch buffer gets each delivery exactly once", async () => {
      // Every answer takes 900 ms; --concurrency 1 --prefetch 8 --timeout-ms 1000 --lease-ms 2000.
      const written = resultsWritten();
      const env = await setup({
        respond: async (_request, index) => {
          const arrived = env.clock.t;
          await written.atLeast(index);
          env.clock.t = Math.max(env.clock.t, arrived + 900);
          return new Response("ok");
        },
      });
      await env.enqueue(10);
      const worker = env.worker(
        { timeoutMs: 1000, leaseMs: 2000, prefetch: 8 },
        { hooks: written.hooks },
      );
      await worker.runOnce();

      expect(env.main.requests).toHaveLength(10);
      expect(sendsPerMessage(env.main)).toEqual(Array.from({ length: 10 }, () => 1));
      expect(await env.store.queue.stats()).toMatchObject({ successful: 10, queued: 0 });
      const shown = await env.store.queue.list({ limit: 20 });
      expect(shown.every((d) => d.attempts === 1)).toBe(true);
      expect(worker.counts).toMatchObject({ successful: 10, discarded: 0 });
    });

    test("a request lasting almost the whole timeout leaves no buffered claim to run out", async () => {
      // WEBHOOK_TIMEOUT_MS=20000 with its default lease, an endpoint answering in 19 s.
      const answers = answersTaking(19_000, () => env.clock);
      const env = await setup({ respond: answers.respond });
      await env.enqueue(12);
      const worker = env.worker(
        { timeoutMs: 20_000, leaseMs: 50_000, concurrency: 2, prefetch: 4 },
        { hooks: answers.hooks, fetch: answers.fetch },
      );
      await worker.runOnce();
      expect(sendsPerMessage(env.main)).toEqual(Array.from({ length: 12 }, () => 1));
      expect(worker.counts.discarded).toBe(0);
    });

    test("a worker paused past its lease sends none of its stale claims when it resumes", async () => {
      const first = hangFirst();
      const env = await setup({ respond: first.respond });
      cleanups.push(first.release);
      await env.enqueue(5);
      const paused = env.worker({}, { workerId: "paused" });
      const pausedRun = paused.runOnce();
      await env.main.waitForRequests(1); // one in flight, four held in its buffer

      // The process stops (SIGSTOP) for longer than its lease; another worker takes over.
      env.clock.t += 31_000;
      const rescuer = env.worker({}, { workerId: "rescuer", store: await env.secondStore() });
      await rescuer.runOnce();
      expect(rescuer.counts.successful).toBe(5);
      const sentBeforeResume = env.main.requests.length;

      first.release(); // it resumes
      await pausedRun;
      // Only the request that was already in flight went out twice (at-least-once); none of
      // the held claims was sent.
      expect(env.main.requests).toHaveLength(sentBeforeResume);
      expect(paused.counts).toMatchObject({ discarded: 1, successful: 0, withdrawn: 4 });
      expect(await env.store.queue.stats()).toMatchObject({ successful: 5, delivering: 0 });
    });

    test("a URL change reaches the claims a worker holds within a second", async () => {
      const first = hangFirst();
      const env = await setup({ respond: first.respond });
      cleanups.push(first.release);
      const moved = env.endpoint();
      await env.enqueue(5);
      const worker = env.worker();
      const run = worker.runOnce();
      await env.main.waitForRequests(1);

      await env.store.webhooks.update(env.webhook.id, { url: `${moved.url}/new` });
      env.clock.t += 1000;
      first.release();
      await run;
      expect(env.main.requests).toHaveLength(1);
      expect(moved.requests.map((r) => r.path)).toEqual(Array(4).fill("/new"));
      expect(sendsPerMessage(env.main, moved)).toEqual(Array.from({ length: 5 }, () => 1));
    });

    test("a secret or header change reaches held claims; so does a disable, with no request", async () => {
      const first = hangFirst();
      const env = await setup({ respond: first.respond });
      cleanups.push(first.release);
      const ids = await env.enqueue(5);
      const worker = env.worker();
      const run = worker.runOnce();
      await env.main.waitForRequests(1);

      await env.store.webhooks.update(env.webhook.id, { enabled: false });
      env.clock.t += 1000;
      first.release();
      await run;
      expect(env.main.requests).toHaveLength(1);
      expect(worker.counts.withdrawn).toBe(4);
      // Given back unattempted: queued, no attempt used, sent once it is enabled again.
      const held = await Promise.all(ids.slice(1).map((id) => env.store.queue.get(id)));
      expect(held.map((h) => [h?.delivery.state, h?.delivery.attempts])).toEqual(
        Array(4).fill(["queued", 0]),
      );

      await env.store.webhooks.update(env.webhook.id, {
        enabled: true,
        headers: [["X-Tenant", "blue"]],
      });
      await env.worker().runOnce();
      expect(env.main.requests.slice(1).map((r) => r.headers["x-tenant"])).toEqual(
        Array(4).fill("blue"),
      );
      expect(sendsPerMessage(env.main)).toEqual(Array.from({ length: 5 }, () => 1));
    });

    test("claims of a deleted webhook end without a request", async () => {
      const first = hangFirst();
      const env = await setup({ respond: first.respond });
      cleanups.push(first.release);
      await env.enqueue(5);
      const worker = env.worker();
      const run = worker.runOnce();
      await env.main.waitForRequests(1);
      await env.store.webhooks.remove(env.webhook.id);
      env.clock.t += 1000;
      first.release();
      await run;
      expect(env.main.requests).toHaveLength(1);
      expect(worker.counts.withdrawn).toBe(4);
    });

    test("a lease that expires at the attempt cap fails the delivery, recording the lost attempt", async () => {
      const env = await setup();
      const [id] = await env.enqueue(1);
      const claim = (workerId: string) =>
        env.store.queue.claim({
          workerId,
          limit: 1,
          leaseMs: 30_000,
          now: env.clock.now(),
          maxAttempts: 2,
        });
      // Two workers die in turn while sending (their claims are never finished).
      expect(await claim("a")).toHaveLength(1);
      env.clock.t += 30_000;
      expect((await claim("b")).map((c) => c.attempt)).toEqual([2]);
      env.clock.t += 30_000;
      const third = env.worker({ maxAttempts: 2 }, { workerId: "c" });
      await third.runOnce();

      expect(env.main.requests).toHaveLength(0);
      const shown = await env.store.queue.get(id ?? 0);
      expect(shown?.delivery).toMatchObject({ state: "failed", attempts: 2 });
      expect(shown?.delivery.completedAt).toBe(env.clock.now());
      expect(shown?.attempts.map((a) => [a.attempt, a.workerId, a.outcome])).toEqual([
        [1, "a", "lease_expired"],
        [2, "b", "lease_expired"],
      ]);
    });
  });
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describeGuarantees("SQLite", async (now) => {
  const dir = mkdtempSync(join(tmpdir(), "guarantees-"));
  dirs.push(dir);
  const path = join(dir, "app.db");
  return {
    store: openSqliteStore(path, { now }),
    another: async () => openSqliteStore(path, { now }),
  };
});

describePostgres("PostgreSQL", () => {
  const pg = usePostgresCluster();
  describeGuarantees("PostgreSQL", async (now) => {
    const url = await pg.cluster.createDatabase();
    return {
      store: await openPostgresStore(url, { now }),
      another: () => openPostgresStore(url, { now }),
    };
  });
});
