import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { runCommand } from "citty";
import { createApp } from "../../lib/app/create-app.ts";
import type { Env } from "../../lib/config/env.ts";
import { loadOperabilityConfig } from "../../lib/config/operability.ts";
import { createMemoryLogger } from "../../lib/log.ts";
import { openSqliteStore } from "../../lib/store/sqlite/store.ts";
import type { NewWebhook } from "../../lib/webhooks/model.ts";
import type { Store } from "../../lib/webhooks/ports.ts";
import { createWebhooksCommand } from "../../lib/webhooks-cli/command.ts";
import { loadWorkerConfig } from "../../lib/worker/config.ts";
import { type RunWorkerOptions, runWorker } from "../../lib/worker/process.ts";
import { createClient } from "../app/harness.ts";
import { change } from "../fakes/change.ts";
import { createFakeClock } from "../fakes/fake-clock.ts";
import { gate, type Responder, startFakeEndpoint } from "../fakes/webhook-endpoint.ts";

const T0 = Date.UTC(2030, 0, 1);
const HOUR = 3_600_000;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * A database file, a fake endpoint and `run(options)`: the worker process's runWorker() with
 * the settings `env` gives, on a clock the test moves (`clock.t`).
 */
function setup(respond?: Responder, env: Env = {}) {
  const dir = mkdtempSync(join(tmpdir(), "run-worker-"));
  const path = join(dir, "app.db");
  const clock = { t: T0, now: () => clock.t };
  const store = openSqliteStore(path, { now: clock.now });
  const endpoint = startFakeEndpoint(respond);
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  cleanups.push(() => store.close());
  cleanups.push(() => endpoint.stop());
  const fullEnv = { DATABASE_URL: path, WEBHOOK_ALLOWED_HOSTS: "127.0.0.1", ...env };
  const config = loadWorkerConfig(fullEnv);
  const operability = loadOperabilityConfig(fullEnv);
  const logger = createMemoryLogger();
  function run(options: Partial<RunWorkerOptions> = {}) {
    return runWorker({
      store,
      config,
      operability,
      logger,
      once: true,
      stop: new AbortController().signal,
      abortInFlight: new AbortController().signal,
      now: clock.now,
      ...options,
    });
  }
  function addWebhook(input: Partial<NewWebhook> = {}) {
    return store.webhooks.create({ name: "hook", url: `${endpoint.url}/in`, ...input });
  }
  /** `bun run webhooks …` in-process on the same database, at `at` (default: the clock). */
  async function cli(args: string[], at = clock.t): Promise<string> {
    const lines: string[] = [];
    await runCommand(
      createWebhooksCommand({ env: fullEnv, out: (text) => lines.push(text), now: () => at }),
      { rawArgs: args },
    );
    return lines.join("\n");
  }
  return { path, store, clock, endpoint, logger, run, addWebhook, cli };
}

describe("heartbeats", () => {
  test("a worker records itself at start and every interval, stays visible while draining, and is gone after a clean exit", async () => {
    const hold = gate();
    cleanups.push(hold.open);
    const { store, endpoint, addWebhook, run, cli } = setup(async () => {
      await hold.promise;
      return new Response("ok");
    });
    const clock = createFakeClock(T0);
    await addWebhook();
    await store.queue.enqueue(change());
    const stop = new AbortController();
    const running = run({
      once: false,
      stop: stop.signal,
      now: clock.now,
      sleep: clock.sleep,
      operability: { ...loadOperabilityConfig({}), heartbeatIntervalMs: 5000 },
    });
    await endpoint.waitForRequests(1);
    await clock.sleeping();
    const [first] = await store.workers.list();
    expect(first).toMatchObject({
      host: hostname(),
      pid: process.pid,
      startedAt: T0,
      lastSeenAt: T0,
      inFlight: 0, // the first beat comes before the first claim
      concurrency: 16,
    });

    clock.advance(5000);
    await clock.sleeping(); // the next beat is written, the heartbeat sleeps again
    expect((await store.workers.list())[0]).toMatchObject({ lastSeenAt: T0 + 5000, inFlight: 1 });
    const live = JSON.parse(await cli(["workers", "--json"], clock.now()));
    expect(live.map((w: { id: string; stale: boolean }) => [w.id, w.stale])).toEqual([
      [first?.id, false],
    ]);
    // Three heartbeats missed: stale (what a crashed worker looks like).
    const later = JSON.parse(await cli(["workers", "--json"], clock.now() + 15_001));
    expect(later[0].stale).toBe(true);

    stop.abort(); // SIGTERM: stop claiming, finish the request in flight
    expect((await store.workers.list()).map((w) => w.id)).toEqual([first?.id ?? ""]);
    hold.open();
    await running;
    expect(await store.workers.list()).toEqual([]);
    expect(await cli(["workers"])).toBe("No worker has reported a heartbeat.");
  });
});

describe("a stop while results cannot be written", () => {
  test("says once how many results it leaves unwritten (sent again after their leases)", async () => {
    const { store, endpoint, addWebhook, run, logger } = setup();
    await addWebhook();
    await store.queue.enqueueMany([change(), change(), change()]);
    const writeFailed = gate();
    // The database refuses every result (a full disk); everything else works.
    const full: Store = Object.assign(Object.create(store) as Store, {
      queue: Object.assign(Object.create(store.queue) as Store["queue"], {
        async finishMany() {
          writeFailed.open();
          throw new Error("database or disk is full");
        },
      }),
    });
    const stop = new AbortController();
    const abortInFlight = new AbortController();
    const running = run({
      store: full,
      once: false,
      stop: stop.signal,
      abortInFlight: abortInFlight.signal,
    });
    await endpoint.waitForRequests(3);
    await writeFailed.promise;
    stop.abort();
    abortInFlight.abort(); // a second Ctrl-C: held results are given up
    await running;
    const stopped = logger.lines.filter((line) => line.includes("not written"));
    expect(stopped).toEqual([
      "warn Stopped with 3 results not written (the database did not take them): their deliveries are sent again once the lease runs out",
    ]);
    expect(await store.queue.stats()).toMatchObject({ delivering: 3, successful: 0 });
  });
});

describe("endpoint health", () => {
  test("a webhook failing for WEBHOOK_AUTO_DISABLE_HOURS is disabled; its waiting deliveries resume when it is enabled again", async () => {
    let status = 500;
    const { store, clock, endpoint, logger, run, addWebhook, cli } = setup(
      () => new Response("down", { status }),
      {
        WEBHOOK_MAX_ATTEMPTS: "1",
        WEBHOOK_AUTO_DISABLE_HOURS: "1",
        WEBHOOK_AUTO_DISABLE_FAILURES: "3",
      },
    );
    const hook = await addWebhook();
    await store.queue.enqueue(change());
    await store.queue.enqueue(change());
    await run();
    expect(endpoint.requests).toHaveLength(2);
    expect(await store.webhooks.get(hook.id)).toMatchObject({ enabled: true, failingSince: T0 });

    // One delivery waits for later; another fails an hour into the streak: the third failure.
    clock.t = T0 + 2 * HOUR;
    const [waiting] = await store.queue.enqueue(change());
    clock.t = T0 + HOUR;
    await store.queue.enqueue(change());
    await run();
    expect(endpoint.requests).toHaveLength(3);
    const disabled = await store.webhooks.get(hook.id);
    expect(disabled).toMatchObject({ enabled: false, disabledAt: T0 + HOUR, failingSince: null });
    expect(disabled?.disabledReason).toBe(
      "Disabled automatically: every attempt failed for 1 h since 2030-01-01T00:00:00.000Z (3 failed deliveries; last answer HTTP 500)",
    );
    expect(logger.lines).toContain(`warn Webhook "hook": ${disabled?.disabledReason}`);
    expect(await cli(["list"])).toContain(
      `    disabled 2030-01-01T01:00:00.000Z: ${disabled?.disabledReason}`,
    );

    // Disabled: its delivery waits (not dropped), nothing is sent however long.
    clock.t = T0 + 3 * HOUR;
    await run();
    expect(endpoint.requests).toHaveLength(3);
    expect((await store.queue.get(waiting ?? 0))?.delivery).toMatchObject({
      state: "queued",
      attempts: 0,
    });

    // The receiver is fixed and someone presses Enable in the admin: the delivery goes out.
    status = 200;
    const admin = createClient(createApp({ store, logger: createMemoryLogger() }));
    const page = `/admin/webhooks/${hook.id}`;
    const enabled = await admin.submit(`${page}/enable`, {}, { from: page });
    expect(enabled.status).toBe(303);
    await run();
    expect(endpoint.requests).toHaveLength(4);
    expect((await store.queue.get(waiting ?? 0))?.delivery.state).toBe("successful");
    expect(await store.webhooks.get(hook.id)).toMatchObject({
      enabled: true,
      disabledReason: null,
      failingSince: null,
    });
  });

  test("a 410 Gone disables the webhook at once; any success ends a streak", async () => {
    const answers = [500, 200, 410];
    const { store, run, addWebhook } = setup(
      () => new Response("", { status: answers.shift() ?? 200 }),
      { WEBHOOK_MAX_ATTEMPTS: "1", WEBHOOK_CONCURRENCY: "1" },
    );
    const hook = await addWebhook();
    await store.queue.enqueue(change());
    await run();
    expect((await store.webhooks.get(hook.id))?.failingSince).toBe(T0);
    await store.queue.enqueue(change());
    await run();
    expect((await store.webhooks.get(hook.id))?.failingSince).toBeNull();
    await store.queue.enqueue(change());
    await run();
    expect(await store.webhooks.get(hook.id)).toMatchObject({
      enabled: false,
      disabledReason: "Disabled automatically: the endpoint answered 410 Gone",
    });
  });
});

describe("429 and 503 slow the webhook down", () => {
  const cases: Array<[string, number, (now: number) => Record<string, string>, number]> = [
    ["429 with Retry-After: 120", 429, () => ({ "retry-after": "120" }), 120_000],
    [
      "503 with an HTTP-date Retry-After",
      503,
      (now) => ({ "retry-after": new Date(now + 45_000).toUTCString() }),
      45_000,
    ],
    ["503 without Retry-After", 503, () => ({}), 30_000],
  ];

  test.each(cases)(
    "%s pauses every delivery of the webhook for that long",
    async (_label, status, headers, pauseMs) => {
      let slowDown = true;
      const { store, clock, endpoint, logger, run, addWebhook } = setup(() => {
        if (!slowDown) return new Response("ok");
        slowDown = false;
        return new Response("busy", { status, headers: headers(clock.t) });
      });
      await addWebhook();
      const [first] = await store.queue.enqueue(change());
      await run();
      expect(endpoint.requests).toHaveLength(1);
      const until = T0 + pauseMs;
      expect(logger.lines).toContain(
        `warn Webhook "hook" paused until ${new Date(until).toISOString()}: the endpoint answered HTTP ${status}`,
      );

      // A new delivery, due at once, waits for the pause too; the worker knows when to look again.
      const [second] = await store.queue.enqueue(change());
      clock.t = until - 1001;
      await run();
      expect(endpoint.requests).toHaveLength(1);
      expect(await store.queue.nextDueAt()).toBe(until - 1000);

      // The first one's own retry (Retry-After, or the backoff for a 503) is no sooner.
      const retryAt = (await store.queue.get(first ?? 0))?.delivery.nextAttemptAt ?? 0;
      expect(retryAt).toBeGreaterThanOrEqual(until);
      clock.t = until;
      await run();
      expect(endpoint.requests).toHaveLength(retryAt === until ? 3 : 2);
      expect((await store.queue.get(second ?? 0))?.delivery.state).toBe("successful");
      clock.t = retryAt;
      await run();
      expect((await store.queue.get(first ?? 0))?.attempts.map((a) => a.statusCode)).toEqual([
        status,
        200,
      ]);
      expect(await store.queue.stats()).toMatchObject({ successful: 2, queued: 0 });
    },
  );

  test("a 500 does not pause the webhook", async () => {
    let answer = 500;
    const { store, endpoint, run, addWebhook } = setup(() => {
      const response = new Response("", { status: answer });
      answer = 200;
      return response;
    });
    await addWebhook();
    await store.queue.enqueue(change());
    await run();
    await store.queue.enqueue(change());
    await run();
    expect(endpoint.requests).toHaveLength(2);
  });
});

describe("rate limit", () => {
  test("two workers on two connections send a webhook's deliveries at most max per second between them", async () => {
    const { path, store, clock, endpoint, addWebhook, run } = setup(() => new Response("ok"), {
      WEBHOOK_CONCURRENCY: "4",
      // No claims held ready: otherwise the first worker's buffer takes all 12 at once.
      WEBHOOK_PREFETCH: "0",
    });
    const other = openSqliteStore(path);
    cleanups.push(() => other.close());
    const limited = await addWebhook({ maxPerSecond: 20, events: ["item.created"] });
    await addWebhook({ name: "free", url: `${endpoint.url}/free`, events: ["item.updated"] });
    const total = 12;
    clock.t = Date.now();
    for (let i = 0; i < total; i++) await store.queue.enqueue(change({ data: { i } }));
    for (let i = 0; i < 4; i++) await store.queue.enqueue(change({ event: "item.updated" }));

    // Real time: the workers wait for their send slots themselves (no test sleeps).
    await Promise.all([
      run({ now: Date.now, workerId: "a" }),
      run({ now: Date.now, workerId: "b", store: other }),
    ]);
    expect(await store.queue.stats()).toMatchObject({ successful: total + 4, queued: 0 });

    const attempts = [];
    for (const delivery of await store.queue.list({ webhookId: limited.id, limit: 100 })) {
      attempts.push(...((await store.queue.get(delivery.id))?.attempts ?? []));
    }
    expect(attempts).toHaveLength(total);
    expect(new Set(attempts.map((a) => a.workerId))).toEqual(new Set(["a", "b"]));
    const starts = attempts.map((a) => a.startedAt).sort((x, y) => x - y);
    // Send slots are 1/20 s apart and no request starts before its slot, but on a busy machine
    // any start can run late, which shortens the gap after it: so the check is on the span. A
    // limit ignored by either worker sends the twelve within a few milliseconds; honoured, the
    // last starts no earlier than eleven slots after the first slot (the first may be one late).
    expect((starts.at(-1) ?? 0) - (starts[0] ?? 0)).toBeGreaterThanOrEqual((total - 2) * 50);
  });
});

describe("retention", () => {
  test("the worker purges deliveries completed more than WEBHOOK_RETENTION_DAYS ago in batches of 500, and delivers meanwhile", async () => {
    const { store, clock, endpoint, run, addWebhook } = setup(undefined, {
      WEBHOOK_RETENTION_DAYS: "30",
    });
    await addWebhook();
    const old = 1003;
    await store.transaction(async (tx) => {
      for (let i = 0; i < old; i++) await tx.queue.enqueue(change());
    });
    const claims = await store.queue.claim({ workerId: "w", limit: old, leaseMs: 60_000, now: T0 });
    await Promise.all(
      claims.map((claim, i) =>
        store.queue.finish(
          claim,
          {
            startedAt: T0,
            durationMs: 1,
            statusCode: i % 2 ? 200 : 500,
            outcome: i % 2 ? "success" : "http_error",
            error: null,
            responseHeaders: null,
            responseBody: null,
          },
          { state: i % 2 ? "successful" : "failed" },
        ),
      ),
    );
    // 29 days later: nothing is old enough yet.
    const batches: number[] = [];
    const counting: Store = {
      ...store,
      queue: {
        ...store.queue,
        async purgeBatch(olderThan, batchSize) {
          const deleted = await store.queue.purgeBatch(olderThan, batchSize);
          batches.push(deleted);
          return deleted;
        },
      },
    };
    clock.t = T0 + 29 * 86_400_000;
    await run({ store: counting });
    expect(batches).toEqual([0]);

    clock.t = T0 + 31 * 86_400_000;
    const [fresh] = await store.queue.enqueue(change());
    await run({ store: counting });
    expect(batches).toEqual([0, 500, 500, 3]);
    expect(endpoint.requests).toHaveLength(1);
    expect(await store.queue.stats()).toEqual({
      queued: 0,
      delivering: 0,
      successful: 1,
      failed: 0,
    });
    expect((await store.queue.get(fresh ?? 0))?.delivery.state).toBe("successful");
    expect(await store.queue.attemptsAfter(0, 5000)).toHaveLength(1);
  });
});
