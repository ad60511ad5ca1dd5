import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { parseAllowList } from "../../lib/http/ssrf.ts";
import { createMemoryLogger } from "../../lib/log.ts";
import { openSqliteStore } from "../../lib/store/sqlite/store.ts";
import type { NewWebhook } from "../../lib/webhooks/model.ts";
import type { Store } from "../../lib/webhooks/ports.ts";
import { createDeliveryWorker, type DeliveryWorkerOptions } from "../../lib/worker/bind.ts";
import { change } from "../fakes/change.ts";
import { gate, type Responder, startFakeEndpoint } from "../fakes/webhook-endpoint.ts";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const T0 = Date.UTC(2030, 0, 1);

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function setup(options: { respond?: Responder } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "delivery-"));
  const path = join(dir, "app.db");
  const clock = { t: T0, now: () => clock.t };
  const store = openSqliteStore(path, { now: clock.now });
  const endpoint = startFakeEndpoint(options.respond);
  const holds: Array<() => void> = [];
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  cleanups.push(() => store.close());
  cleanups.push(() => endpoint.stop());
  cleanups.push(() => {
    for (const open of holds) open();
  });
  const config = {
    timeoutMs: 5000,
    maxAttempts: 5,
    allowList: parseAllowList("127.0.0.1"),
    leaseMs: 30_000,
    concurrency: 8,
    retryBaseMs: 10_000,
    retryMaxMs: 3_600_000,
  };
  function worker(overrides: Partial<DeliveryWorkerOptions> = {}) {
    return createDeliveryWorker({
      store,
      now: clock.now,
      random: () => 0.5,
      ...overrides,
      config: { ...config, ...overrides.config },
    });
  }
  function addWebhook(input: Partial<NewWebhook> = {}) {
    return store.webhooks.create({
      name: "hook",
      url: `${endpoint.url}/in`,
      secret: SECRET,
      ...input,
    });
  }
  function openAnother(): Store {
    const other = openSqliteStore(path, { now: clock.now });
    cleanups.push(() => other.close());
    return other;
  }
  return { store, clock, endpoint, worker, addWebhook, openAnother, holds };
}

async function only(store: Store, id: number | undefined) {
  const shown = await store.queue.get(id ?? -1);
  if (!shown) throw new Error(`no delivery ${id}`);
  return shown;
}

describe("delivery state machine", () => {
  test("queued → delivering → successful on a 2xx, with the attempt recorded", async () => {
    const { store, worker, addWebhook, endpoint, clock } = setup();
    await addWebhook();
    const [id] = await store.queue.enqueue(change());
    clock.t = T0 + 25;
    await worker().runOnce();
    const { delivery, attempts } = await only(store, id);
    expect(delivery).toMatchObject({
      state: "successful",
      attempts: 1,
      lastStatus: 200,
      completedAt: T0 + 25,
    });
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({
      attempt: 1,
      statusCode: 200,
      outcome: "success",
      responseBody: "ok",
    });
    expect(endpoint.requests).toHaveLength(1);
    const received = endpoint.requests[0];
    expect(received?.body).toBe(delivery.payload);
    expect(received?.headers["webhook-id"]).toBe(delivery.messageId);
  });

  test("a failure is retried on the backoff schedule, then succeeds, keeping every attempt", async () => {
    let answers = [500, 500, 200];
    const { store, worker, addWebhook, clock, endpoint } = setup({
      respond: () => new Response("x", { status: answers.shift() ?? 200 }),
    });
    await addWebhook({ retrySchedule: "short" });
    const [id] = await store.queue.enqueue(change());
    const w = worker();

    await w.runOnce();
    expect((await only(store, id)).delivery).toMatchObject({
      state: "queued",
      attempts: 1,
      lastStatus: 500,
      nextAttemptAt: T0 + 10_000,
    });
    // Not due yet: nothing is sent.
    clock.t = T0 + 9_999;
    await w.runOnce();
    expect(endpoint.requests).toHaveLength(1);

    clock.t = T0 + 10_000;
    await w.runOnce();
    expect((await only(store, id)).delivery).toMatchObject({
      state: "queued",
      attempts: 2,
      nextAttemptAt: T0 + 10_000 + 20_000,
    });
    clock.t = T0 + 30_000;
    await w.runOnce();
    const { delivery, attempts } = await only(store, id);
    expect(delivery.state).toBe("successful");
    expect(attempts.map((a) => [a.attempt, a.statusCode])).toEqual([
      [1, 500],
      [2, 500],
      [3, 200],
    ]);
    // Every retry carried the same webhook-id.
    expect(new Set(endpoint.requests.map((r) => r.headers["webhook-id"])).size).toBe(1);
    answers = [];
  });

  test("a delivery fails after WEBHOOK_MAX_ATTEMPTS attempts", async () => {
    const { store, worker, addWebhook, clock } = setup({
      respond: () => new Response("no", { status: 500 }),
    });
    await addWebhook();
    const [id] = await store.queue.enqueue(change());
    const w = worker({ config: { maxAttempts: 3 } as DeliveryWorkerOptions["config"] });
    for (let i = 0; i < 3; i++) {
      await w.runOnce();
      clock.t += 3_600_000;
    }
    const { delivery, attempts } = await only(store, id);
    expect(delivery).toMatchObject({ state: "failed", attempts: 3, lastStatus: 500 });
    expect(attempts).toHaveLength(3);
    await w.runOnce();
    expect((await only(store, id)).attempts).toHaveLength(3);
  });

  test("maxAttempts 1 fails on the first error, as NetBox does by default", async () => {
    const { store, worker, addWebhook } = setup({
      respond: () => new Response("no", { status: 502 }),
    });
    await addWebhook();
    const [id] = await store.queue.enqueue(change());
    await worker({ config: { maxAttempts: 1 } as DeliveryWorkerOptions["config"] }).runOnce();
    expect((await only(store, id)).delivery.state).toBe("failed");
  });

  test("410 Gone fails the delivery at once", async () => {
    const { store, worker, addWebhook } = setup({
      respond: () => new Response("gone", { status: 410 }),
    });
    await addWebhook();
    const [id] = await store.queue.enqueue(change());
    await worker().runOnce();
    expect((await only(store, id)).delivery).toMatchObject({
      state: "failed",
      attempts: 1,
      lastStatus: 410,
    });
  });

  test("Retry-After pushes the next attempt back", async () => {
    const { store, worker, addWebhook } = setup({
      respond: () => new Response("busy", { status: 503, headers: { "Retry-After": "300" } }),
    });
    await addWebhook();
    const [id] = await store.queue.enqueue(change());
    await worker().runOnce();
    expect((await only(store, id)).delivery).toMatchObject({
      state: "queued",
      nextAttemptAt: T0 + 300_000,
    });
  });

  test("a timeout is recorded and retried no sooner than 60 s later", async () => {
    const { store, worker, addWebhook, holds } = setup({
      respond: async () => {
        const hold = gate();
        holds.push(hold.open);
        await hold.promise;
        return new Response("late");
      },
    });
    await addWebhook();
    const [id] = await store.queue.enqueue(change());
    await worker({ config: { timeoutMs: 100 } as DeliveryWorkerOptions["config"] }).runOnce();
    const { delivery, attempts } = await only(store, id);
    expect(delivery).toMatchObject({ state: "queued", nextAttemptAt: T0 + 60_000 });
    expect(attempts[0]).toMatchObject({ outcome: "timeout", statusCode: null });
  });

  test("a redirect is a failure and is not followed", async () => {
    const { store, worker, addWebhook, endpoint } = setup({
      respond: (request) =>
        request.path === "/in"
          ? Response.redirect(`${endpoint.url}/elsewhere`, 301)
          : new Response("ok"),
    });
    await addWebhook();
    const [id] = await store.queue.enqueue(change());
    await worker().runOnce();
    expect((await only(store, id)).delivery).toMatchObject({ state: "queued", lastStatus: 301 });
    expect(endpoint.requests.map((r) => r.path)).toEqual(["/in"]);
  });

  test("an address outside WEBHOOK_ALLOWED_HOSTS is a failed attempt naming the variable", async () => {
    const { store, worker, addWebhook, endpoint } = setup();
    await addWebhook();
    const [id] = await store.queue.enqueue(change());
    await worker({
      config: { allowList: [] } as unknown as DeliveryWorkerOptions["config"],
    }).runOnce();
    const { delivery, attempts } = await only(store, id);
    expect(delivery.state).toBe("queued");
    expect(attempts[0]?.outcome).toBe("blocked");
    expect(attempts[0]?.error).toContain("WEBHOOK_ALLOWED_HOSTS=127.0.0.1:");
    expect(endpoint.requests).toHaveLength(0);
  });

  test("a webhook's host name is resolved once per 30 s, not once per attempt", async () => {
    const { store, worker, addWebhook, endpoint, clock } = setup();
    // hook.test exists only in this resolver: fetch doing a lookup of its own would fail.
    await addWebhook({ url: `http://hook.test:${new URL(endpoint.url).port}/in` });
    for (let n = 0; n < 20; n++) await store.queue.enqueue(change());
    const lookups: number[] = [];
    const resolve = async () => {
      lookups.push(clock.t);
      return ["127.0.0.1"];
    };
    const delivering = worker({ resolve });
    await delivering.runOnce();
    expect(endpoint.requests).toHaveLength(20);
    // The first attempts start together (concurrency 8), each before any answer is known.
    const first = lookups.length;
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThanOrEqual(8);
    for (let n = 0; n < 20; n++) await store.queue.enqueue(change());
    await delivering.runOnce();
    expect(endpoint.requests).toHaveLength(40);
    expect(lookups).toHaveLength(first);
    // Half a minute on, the next attempt asks again.
    clock.t += 30_000;
    await store.queue.enqueue(change());
    await delivering.runOnce();
    expect(endpoint.requests).toHaveLength(41);
    expect(lookups).toHaveLength(first + 1);
    expect(lookups.at(-1)).toBe(T0 + 30_000);
  });

  test("deliveries of a disabled webhook wait until it is enabled again", async () => {
    const { store, worker, addWebhook, endpoint } = setup();
    const hook = await addWebhook();
    const [id] = await store.queue.enqueue(change());
    await store.webhooks.update(hook.id, { enabled: false });
    const w = worker();
    await w.runOnce();
    expect(endpoint.requests).toHaveLength(0);
    await store.webhooks.update(hook.id, { enabled: true });
    await w.runOnce();
    expect((await only(store, id)).delivery.state).toBe("successful");
  });

  test("the receiving end verifies every signature with the standardwebhooks package", async () => {
    const { store, worker, addWebhook, endpoint, clock } = setup();
    clock.t = Date.now(); // verifiers reject timestamps more than 5 minutes off
    await addWebhook();
    for (let i = 0; i < 5; i++) await store.queue.enqueue(change({ data: { i } }));
    await worker().runOnce();
    const verifier = new StandardWebhook(SECRET);
    expect(endpoint.requests).toHaveLength(5);
    for (const request of endpoint.requests) {
      expect(() => verifier.verify(request.body, request.headers)).not.toThrow();
    }
  });

  test("failed attempts are logged as one line each, with control characters escaped", async () => {
    const { store, worker, addWebhook } = setup({
      respond: () => new Response("no", { status: 500 }),
    });
    await addWebhook({ name: "evil\u001b[2J" });
    await store.queue.enqueue(change());
    const logger = createMemoryLogger();
    await worker({ logger }).runOnce();
    expect(logger.lines).toHaveLength(1);
    expect(logger.lines[0]).toMatch(
      /^warn Delivery 1 \(item\.created\) to "evil\\u001b\[2J", attempt 1\/5 \(\d+ ms\): HTTP 500/,
    );
    expect(logger.lines[0]).not.toContain("\u001b");
  });
});

describe("several workers", () => {
  test("two workers on two connections deliver 200 deliveries, each exactly once", async () => {
    const { store, worker, addWebhook, endpoint, openAnother } = setup();
    await addWebhook();
    for (let i = 0; i < 200; i++) await store.queue.enqueue(change({ data: { i } }));
    const a = worker({ workerId: "a" });
    const b = worker({ workerId: "b", store: openAnother() });
    await Promise.all([a.runOnce(), b.runOnce()]);

    expect(endpoint.requests).toHaveLength(200);
    expect(new Set(endpoint.requests.map((r) => r.headers["webhook-id"])).size).toBe(200);
    expect(await store.queue.stats()).toEqual({
      queued: 0,
      delivering: 0,
      successful: 200,
      failed: 0,
    });
    // Both took part (each claims up to 8 at a time).
    expect(a.counts.successful).toBeGreaterThan(0);
    expect(b.counts.successful).toBeGreaterThan(0);
    expect(a.counts.successful + b.counts.successful).toBe(200);
  });

  test("an expired lease is taken over and the first worker's late result is discarded", async () => {
    const first = gate();
    const { store, worker, addWebhook, endpoint, clock, openAnother, holds } = setup({
      respond: async (_request, index) => {
        if (index === 0) await first.promise; // the first worker's request hangs
        return new Response("ok");
      },
    });
    holds.push(first.open);
    await addWebhook();
    const [id] = await store.queue.enqueue(change());
    const slow = worker({ workerId: "slow" });
    const slowRun = slow.runOnce();
    await endpoint.waitForRequests(1);

    // The lease runs out (the slow worker looks dead) and another process takes over.
    clock.t = T0 + 30_000;
    const rescuer = worker({ workerId: "rescuer", store: openAnother() });
    await rescuer.runOnce();
    expect(rescuer.counts.successful).toBe(1);

    first.open();
    await slowRun;
    expect(slow.counts).toMatchObject({ discarded: 1, successful: 0 });
    const { delivery, attempts } = await only(store, id);
    expect(delivery).toMatchObject({ state: "successful", attempts: 2 });
    expect(attempts.map((a) => [a.attempt, a.workerId, a.outcome])).toEqual([
      [1, "slow", "lease_expired"],
      [2, "rescuer", "success"],
    ]);
    expect(endpoint.requests).toHaveLength(2);
  });

  test("run() wakes up for a delivery enqueued by another connection", async () => {
    const { store, worker, addWebhook, endpoint, openAnother } = setup();
    await addWebhook();
    const w = worker();
    const stop = new AbortController();
    const running = w.run({ signal: stop.signal });
    await openAnother().queue.enqueue(change());
    await endpoint.waitForRequests(1);
    stop.abort();
    await running;
    expect(w.counts.successful).toBe(1);
    expect((await store.queue.stats()).successful).toBe(1);
  });
});
