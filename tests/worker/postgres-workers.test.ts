import { expect, test } from "bun:test";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { openPostgresStore } from "../../lib/store/postgres/store.ts";
import type { Store } from "../../lib/webhooks/ports.ts";
import { change } from "../fakes/change.ts";
import { describePostgres, usePostgresCluster } from "../fakes/postgres-cluster.ts";

const WORKER_SCRIPT = join(import.meta.dir, "../../scripts/worker.ts");

/**
 * A loopback webhook endpoint that counts requests per `webhook-id` and lets a test await "every
 * id seen at least once" instead of sleeping. `hold` keeps responses pending until released.
 */
function startCountingEndpoint() {
  const perId = new Map<string, number>();
  let hold: Promise<void> | null = null;
  const waiters: Array<{ done: () => boolean; resolve: () => void }> = [];
  const check = () => {
    for (const waiter of [...waiters]) {
      if (!waiter.done()) continue;
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  };
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    async fetch(request) {
      await request.arrayBuffer();
      const id = request.headers.get("webhook-id") ?? "";
      perId.set(id, (perId.get(id) ?? 0) + 1);
      total += 1;
      check();
      if (hold) await hold;
      return new Response("ok");
    },
  });
  let total = 0;
  return {
    url: `http://127.0.0.1:${server.port}/hook`,
    perId,
    get total() {
      return total;
    },
    /** Resolves once `done()` holds after some request (checked at every arrival). */
    until(done: () => boolean): Promise<void> {
      if (done()) return Promise.resolve();
      return new Promise<void>((resolve) => waiters.push({ done, resolve }));
    },
    holdResponses(): () => void {
      let release: () => void = () => {};
      hold = new Promise<void>((resolve) => {
        release = resolve;
      });
      return () => {
        hold = null;
        release();
      };
    },
    stop: () => server.stop(true),
  };
}

describePostgres("worker processes on PostgreSQL", () => {
  const pg = usePostgresCluster();
  const { cleanups } = pg;

  /** A counting endpoint, a fresh database and `webhooks` webhooks to the endpoint. */
  async function setUp(webhooks: number) {
    const endpoint = startCountingEndpoint();
    cleanups.push(() => endpoint.stop());
    const url = await pg.cluster.createDatabase();
    const store = await openPostgresStore(url);
    cleanups.push(() => store.close());
    for (let i = 0; i < webhooks; i++) {
      await store.webhooks.create({ name: `hook-${i}`, url: `${endpoint.url}?n=${i}` });
    }
    return { endpoint, url, store };
  }

  /** `count` enqueues, a few at a time (each fans out to every webhook). */
  async function enqueue(store: Store, count: number): Promise<void> {
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < count) {
          next += 1;
          await store.queue.enqueue(change());
        }
      }),
    );
  }

  interface Worker {
    child: Subprocess<"ignore", "ignore", "pipe">;
    /** Everything the worker logged, read as it comes so a full pipe never blocks it. */
    log: Promise<string>;
  }

  function startWorker(databaseUrl: string, env: Record<string, string> = {}): Worker {
    const child = Bun.spawn([process.execPath, WORKER_SCRIPT], {
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        WEBHOOK_ALLOWED_HOSTS: "127.0.0.1",
        WEBHOOK_CONCURRENCY: "16",
        ...env,
      },
      stdin: "ignore",
      stdout: "ignore",
      stderr: "pipe",
    });
    cleanups.push(async () => {
      child.kill("SIGKILL");
      await child.exited;
    });
    return { child, log: new Response(child.stderr).text() };
  }

  /** SIGTERM: the worker finishes what is in flight and exits 0. */
  async function stopWorker(worker: Worker): Promise<string> {
    worker.child.kill("SIGTERM");
    const code = await worker.child.exited;
    const log = await worker.log;
    if (code !== 0) throw new Error(`worker exited with ${code}: ${log.slice(-2000)}`);
    return log;
  }

  async function attemptsByDelivery(store: Store) {
    const deliveries = [];
    for (let beforeId: number | undefined; ; ) {
      const page = await store.queue.list({ limit: 1000, beforeId });
      if (page.length === 0) break;
      deliveries.push(...page);
      beforeId = page.at(-1)?.id;
    }
    return deliveries;
  }

  test("three worker processes drain 10,000 deliveries: every attempt made exactly once, none lost", async () => {
    const { endpoint, url, store } = await setUp(20);
    await enqueue(store, 500); // × 20 webhooks
    expect((await store.queue.stats()).queued).toBe(10_000);

    const workers = [startWorker(url), startWorker(url), startWorker(url)];
    await endpoint.until(() => endpoint.perId.size === 10_000);
    await Promise.all(workers.map(stopWorker));

    expect(endpoint.total).toBe(10_000);
    expect([...endpoint.perId.values()].every((n) => n === 1)).toBe(true);
    expect(await store.queue.stats()).toEqual({
      queued: 0,
      delivering: 0,
      successful: 10_000,
      failed: 0,
    });
    const deliveries = await attemptsByDelivery(store);
    expect(new Set(deliveries.map((d) => d.messageId))).toEqual(new Set(endpoint.perId.keys()));
    expect(deliveries.every((d) => d.attempts === 1)).toBe(true);
    const sample = await store.queue.get(deliveries[0]?.id ?? 0);
    expect(sample?.attempts.map((a) => [a.attempt, a.outcome])).toEqual([[1, "success"]]);
    expect(new Set(deliveries.map((d) => d.leaseOwner))).toEqual(new Set([null]));
  }, 120_000);

  test("a worker killed with SIGKILL mid-batch: the others finish its deliveries after the lease", async () => {
    const { endpoint, url, store } = await setUp(1);
    await enqueue(store, 200);
    const env = { WEBHOOK_TIMEOUT_MS: "1000", WEBHOOK_LEASE_MS: "2000" };

    // The victim's first 16 requests hang, so it dies with a full batch in flight.
    const release = endpoint.holdResponses();
    const victim = startWorker(url, env);
    await endpoint.until(() => endpoint.total === 16);
    victim.child.kill("SIGKILL");
    await victim.child.exited;
    const orphaned = [...endpoint.perId.keys()];
    release();

    const others = [startWorker(url, env), startWorker(url, env)];
    // Every orphaned delivery comes a second time once its lease has run out.
    await endpoint.until(
      () => endpoint.perId.size === 200 && orphaned.every((id) => endpoint.perId.get(id) === 2),
    );
    await Promise.all(others.map(stopWorker));

    expect(await store.queue.stats()).toMatchObject({ successful: 200, queued: 0, delivering: 0 });
    expect(endpoint.total).toBe(216);
    // The victim held 80 claims: 16 requests in flight (orphaned) and 64 prefetched (by default
    // four times the concurrency) that it never sent. All 80 come back with a lease_expired attempt,
    // as the claim is the only record that a request may have been made; only the 16 orphaned
    // reached the endpoint twice.
    let expired = 0;
    for (const delivery of await attemptsByDelivery(store)) {
      const shown = await store.queue.get(delivery.id);
      const outcomes = shown?.attempts.map((a) => a.outcome);
      if (outcomes?.[0] === "lease_expired") {
        expired++;
        expect(outcomes).toEqual(["lease_expired", "success"]);
        expect(shown?.attempts[0]?.error).toContain("may not have been sent");
        expect(endpoint.perId.get(delivery.messageId)).toBe(
          orphaned.includes(delivery.messageId) ? 2 : 1,
        );
      } else {
        expect(orphaned).not.toContain(delivery.messageId);
        expect(outcomes).toEqual(["success"]);
      }
    }
    expect(expired).toBe(80);
  }, 60_000);

  test("a worker keeps delivering across a database restart and loses nothing", async () => {
    const { endpoint, url, store } = await setUp(1);
    await enqueue(store, 600);
    // A full batch is in flight, unanswered, while the database goes down and comes back: the
    // worker records those attempts after the restart.
    const release = endpoint.holdResponses();
    const worker = startWorker(url, { WEBHOOK_TIMEOUT_MS: "5000", WEBHOOK_LEASE_MS: "6000" });
    await endpoint.until(() => endpoint.total === 16);
    await pg.cluster.restart();
    release();
    // Work queued after the restart reaches the worker too (LISTEN re-established, or polling).
    await enqueue(store, 200);
    await endpoint.until(() => endpoint.perId.size === 800);
    await stopWorker(worker);

    expect(await store.queue.stats()).toEqual({
      queued: 0,
      delivering: 0,
      successful: 800,
      failed: 0,
    });
    for (const delivery of await attemptsByDelivery(store)) {
      const shown = await store.queue.get(delivery.id);
      expect(shown?.attempts.filter((a) => a.outcome === "success")).toHaveLength(1);
    }
  }, 60_000);
});
