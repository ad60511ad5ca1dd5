import { Database } from "bun:sqlite";
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { SQL } from "bun";
import { CHANGE_CHANNEL } from "../../lib/store/postgres/changes.ts";
import { openPostgresStore } from "../../lib/store/postgres/store.ts";
import { openSqliteStore } from "../../lib/store/sqlite/store.ts";
import type { Store } from "../../lib/webhooks/ports.ts";
import { change } from "../fakes/change.ts";
import { describePostgres, usePostgresCluster } from "../fakes/postgres-cluster.ts";
import { tempDirs } from "../fakes/temp-dirs.ts";
import { type FakeEndpoint, gate, startFakeEndpoint } from "../fakes/webhook-endpoint.ts";
import { spawnWorker } from "../fakes/worker-process.ts";

// Worker processes, a takeover after a lease and an outage longer than one.
setDefaultTimeout(120_000);

const cleanups: Array<() => Promise<void> | void> = [];
/** What an answer that never comes waits for; opened at the end so the server can stop. */
let never = gate();
afterEach(async () => {
  never.open();
  never = gate();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Change `n` of item `item`: its request id says which, so the endpoint can tell the order. */
function itemChange(item: number, n: number) {
  return change({ event: "item.updated", requestId: `i${item}-c${n}`, data: { id: item } });
}

/** Changes 1..changes of items 1..items, committed change by change across the items. */
function interleaved(items: number, changes: number) {
  const all = [];
  for (let n = 1; n <= changes; n++) {
    for (let item = 1; item <= items; item++) all.push(itemChange(item, n));
  }
  return all;
}

interface Arrival {
  hook: string;
  item: number;
  n: number;
  messageId: string;
  status: number;
}

/**
 * An endpoint that records, as requests arrive, which change of which item came to which
 * webhook (`/fifo`, `/plain`), and answers `status` (0: never) after a random 0–15 ms, so
 * requests overtake each other.
 */
function orderingEndpoint(status: (arrival: Omit<Arrival, "status">) => number) {
  const arrivals: Arrival[] = [];
  const endpoint = startFakeEndpoint(async (request) => {
    const body = JSON.parse(request.body) as { request_id: string; data: { id: number } };
    const seen = {
      hook: request.path.slice(1),
      item: body.data.id,
      n: Number(/-c(\d+)$/.exec(body.request_id)?.[1]),
      messageId: request.headers["webhook-id"] ?? "",
    };
    const code = status(seen);
    arrivals.push({ ...seen, status: code });
    if (code === 0) await never.promise;
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 15));
    return new Response(code === 200 ? "ok" : "no", { status: code });
  });
  cleanups.push(() => endpoint.stop());
  return { endpoint, arrivals };
}

/** Per item, the changes an ordered webhook received in arrival order (repeats kept). */
function sequences(arrivals: Arrival[], hook: string): Map<number, number[]> {
  const byItem = new Map<number, number[]>();
  for (const a of arrivals.filter((a) => a.hook === hook)) {
    byItem.set(a.item, [...(byItem.get(a.item) ?? []), a.n]);
  }
  return byItem;
}

/** Each message answered 200 exactly once: nothing sent twice after its success, nothing lost. */
function expectEachSuccessfulOnce(arrivals: Arrival[], total: number) {
  const ok = arrivals.filter((a) => a.status === 200).map((a) => a.messageId);
  expect(ok).toHaveLength(total);
  expect(new Set(ok).size).toBe(total);
}

/** Polls the database (the workers are other processes) until `done`, for at most 30 s. */
async function until(done: () => Promise<boolean>): Promise<void> {
  const deadline = performance.now() + 30_000;
  while (!(await done()) && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Until `count` workers have registered (each opened the database): one that opens during the
 * outage would wait out busy_timeout and exit 2, which is not what the outage test is about.
 */
function untilWorkersStarted(store: Store, count: number): Promise<void> {
  return until(async () => (await store.workers.list()).length >= count);
}

async function setUpWebhooks(store: Store, endpoint: FakeEndpoint) {
  await store.webhooks.create({ name: "fifo", url: `${endpoint.url}/fifo`, ordered: true });
  await store.webhooks.create({ name: "plain", url: `${endpoint.url}/plain` });
}

/**
 * Three workers, random answer times, and a first attempt that fails (item 1's change 1 at the
 * ordered webhook) with a retry a minute away: every other change of every item arrives, item
 * 1's later changes do not; once the retry is made due, they follow it, in order.
 */
async function orderedThroughARetry(options: {
  databaseUrl: string;
  store: Store;
  makeRetriesDue: () => Promise<void>;
}) {
  const { store } = options;
  const { endpoint, arrivals } = orderingEndpoint((a) => {
    const first = !arrivals.some((b) => b.hook === "fifo" && b.item === 1);
    return a.hook === "fifo" && a.item === 1 && first ? 500 : 200;
  });
  await setUpWebhooks(store, endpoint);
  const ITEMS = 30;
  const CHANGES = 4;
  await store.queue.enqueueMany(interleaved(ITEMS, CHANGES));
  const env = { WEBHOOK_CONCURRENCY: "8", WEBHOOK_RETRY_BASE_MS: "60000" };
  const workers = [1, 2, 3].map(() => spawnWorker(options.databaseUrl, { env, cleanups }));

  const total = 2 * ITEMS * CHANGES;
  // Everything but item 1's changes 2.. at the ordered webhook, plus its failed first attempt.
  await endpoint.waitForRequests(total - CHANGES + 1);
  expect(sequences(arrivals, "fifo").get(1)).toEqual([1]);
  await options.makeRetriesDue();
  await endpoint.waitForRequests(total + 1);

  const fifo = sequences(arrivals, "fifo");
  const inOrder = Array.from({ length: CHANGES }, (_, i) => i + 1);
  expect(fifo.get(1)).toEqual([1, ...inOrder]);
  for (let item = 2; item <= ITEMS; item++) expect(fifo.get(item)).toEqual(inOrder);
  expectEachSuccessfulOnce(arrivals, total);
  for (const worker of workers) worker.kill("SIGTERM");
  expect(await Promise.all(workers.map((w) => w.exited))).toEqual([0, 0, 0]);
  expect(await store.queue.stats()).toMatchObject({ successful: total, queued: 0, delivering: 0 });
}

/**
 * A worker killed (SIGKILL) while item 1's first change is in flight to the ordered webhook:
 * item 1's later changes wait until another worker has taken it over and sent it again.
 */
async function takeoverMidSequence(databaseUrl: string, store: Store) {
  // Item 1's first change, the first time it comes to the ordered webhook, is never answered.
  const { endpoint, arrivals } = orderingEndpoint((a) => {
    const first = !arrivals.some((b) => b.hook === "fifo" && b.item === 1);
    return a.hook === "fifo" && a.item === 1 && first ? 0 : 200;
  });
  await setUpWebhooks(store, endpoint);
  const ITEMS = 5;
  const CHANGES = 3;
  await store.queue.enqueueMany(interleaved(ITEMS, CHANGES));
  // Short leases and beats, so the takeover comes within seconds of the kill.
  const env = {
    WEBHOOK_CONCURRENCY: "4",
    WEBHOOK_TIMEOUT_MS: "1000",
    WEBHOOK_LEASE_MS: "2000",
    WORKER_HEARTBEAT_MS: "1000",
  };
  const first = spawnWorker(databaseUrl, { env, cleanups });
  const total = 2 * ITEMS * CHANGES;
  // Everything else that can go has gone (the hung request included): item 1's later
  // changes wait for the hung one.
  await endpoint.waitForRequests(total - CHANGES + 1);
  // Killed once those results are written: only the hung request is lost (a result still in
  // its group commit would be lost too, and that delivery sent again: at least once).
  await until(async () => (await store.queue.stats()).successful === total - CHANGES);
  expect(sequences(arrivals, "fifo").get(1)).toEqual([1]);
  first.kill("SIGKILL");
  await first.exited;
  const second = spawnWorker(databaseUrl, { env, cleanups });
  await endpoint.waitForRequests(total + 1);
  const inOrder = Array.from({ length: CHANGES }, (_, i) => i + 1);
  expect(sequences(arrivals, "fifo").get(1)).toEqual([1, ...inOrder]);
  for (let item = 2; item <= ITEMS; item++) {
    expect(sequences(arrivals, "fifo").get(item)).toEqual(inOrder);
  }
  expectEachSuccessfulOnce(arrivals, total);
  const taken = await store.queue.list({ object: { model: "item", id: 1 }, limit: 10 });
  const retaken = taken.find((d) => d.attempts === 2);
  expect(retaken?.ordered).toBe(true);
  second.kill("SIGTERM");
  expect(await second.exited).toBe(0);
}

/**
 * Three workers through `outage` (longer than their lease): each item's changes arrive in order,
 * each message once, none lost, and no lease is taken over (each was held by a live worker).
 */
async function throughAnOutage(databaseUrl: string, store: Store, outage: () => Promise<void>) {
  const { endpoint, arrivals } = orderingEndpoint(() => 200);
  await setUpWebhooks(store, endpoint);
  const ITEMS = 20;
  const CHANGES = 6;
  await store.queue.enqueueMany(interleaved(ITEMS, CHANGES));
  const env = {
    WEBHOOK_CONCURRENCY: "4",
    WEBHOOK_TIMEOUT_MS: "1000",
    WEBHOOK_LEASE_MS: "3000",
    WORKER_HEARTBEAT_MS: "1000",
  };
  const workers = [1, 2, 3].map(() => spawnWorker(databaseUrl, { env, cleanups }));
  await untilWorkersStarted(store, 3);
  await endpoint.waitForRequests(20);
  await outage();
  const total = 2 * ITEMS * CHANGES;
  await until(
    async () =>
      new Set(arrivals.map((a) => a.messageId)).size >= total &&
      (await store.queue.stats()).successful === total,
  );
  const inOrder = Array.from({ length: CHANGES }, (_, i) => i + 1);
  const repeated = [...countBy(arrivals.map((a) => a.messageId))].filter(([, n]) => n > 1);
  expect(repeated).toEqual([]);
  for (let item = 1; item <= ITEMS; item++) {
    expect(sequences(arrivals, "fifo").get(item)).toEqual(inOrder);
  }
  expectEachSuccessfulOnce(arrivals, total);
  const lost = [];
  for (const delivery of await store.queue.list({ limit: total })) {
    const shown = await store.queue.get(delivery.id);
    if (shown?.attempts.some((a) => a.outcome === "lease_expired")) lost.push(delivery.id);
  }
  expect(lost).toEqual([]);
  for (const worker of workers) worker.kill("SIGTERM");
  expect(await Promise.all(workers.map((w) => w.exited))).toEqual([0, 0, 0]);
}

function countBy(values: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
}

describe("ordered delivery with SQLite worker processes", () => {
  const dir = tempDirs("ordered-");

  function sqliteStore(): { path: string; store: Store } {
    const path = join(dir(), "app.db");
    const store = openSqliteStore(path);
    cleanups.push(() => store.close());
    return { path, store };
  }

  test("three workers, random answer times, a retried first attempt: each item's changes arrive in order and once", async () => {
    const { path, store } = sqliteStore();
    await orderedThroughARetry({
      databaseUrl: path,
      store,
      async makeRetriesDue() {
        const db = new Database(path);
        db.run("PRAGMA busy_timeout = 5000");
        db.run("UPDATE deliveries SET next_attempt_at = 0 WHERE state = 'queued'");
        db.close();
      },
    });
  });

  test("a worker killed mid-sequence: its delivery is taken over and sent before the item's next change", async () => {
    const { path, store } = sqliteStore();
    await takeoverMidSequence(path, store);
  });

  test("an outage longer than the lease (the write lock held elsewhere): each item's changes arrive in order and once, none lost", async () => {
    const { path, store } = sqliteStore();
    await throughAnOutage(path, store, async () => {
      const holder = new Database(path);
      holder.run("PRAGMA busy_timeout = 5000");
      holder.run("BEGIN IMMEDIATE");
      try {
        // The outage is a span of real time: longer than the lease and than busy_timeout.
        await Bun.sleep(6000);
        // The case at hand: leases of live workers holding ordered deliveries ran out meanwhile.
        const expired = holder
          .query<{ n: number }, [number]>(
            "SELECT count(*) AS n FROM deliveries WHERE state = 'delivering' AND ordered = 1 AND lease_expires_at < ?",
          )
          .get(Date.now());
        expect(expired?.n).toBeGreaterThan(0);
      } finally {
        holder.run("ROLLBACK");
        holder.close();
      }
    });
  });
});

describePostgres("ordered delivery with PostgreSQL worker processes", () => {
  const pg = usePostgresCluster();

  test("three workers, random answer times, a retried first attempt: each item's changes arrive in order and once", async () => {
    const url = await pg.cluster.createDatabase();
    const store = await openPostgresStore(url);
    cleanups.push(() => store.close());
    await orderedThroughARetry({
      databaseUrl: url,
      store,
      async makeRetriesDue() {
        const sql = new SQL(url, { max: 1 });
        await sql`UPDATE deliveries SET next_attempt_at = 0 WHERE state = 'queued'`;
        await sql`SELECT pg_notify(${CHANGE_CHANNEL}, '')`;
        await sql.close();
      },
    });
  });

  test("a worker killed mid-sequence: its delivery is taken over and sent before the item's next change", async () => {
    const url = await pg.cluster.createDatabase();
    const store = await openPostgresStore(url);
    cleanups.push(() => store.close());
    await takeoverMidSequence(url, store);
  });

  test("a table lock held past the lease (LOCK TABLE deliveries): each item's changes arrive in order and once, none lost", async () => {
    const url = await pg.cluster.createDatabase();
    const store = await openPostgresStore(url);
    cleanups.push(() => store.close());
    await throughAnOutage(url, store, async () => {
      // As VACUUM FULL, REINDEX or a long migration would: claims, renewals and results all
      // wait in the lock's queue while the workers' beats go on.
      const holder = new SQL(url, { max: 1 });
      try {
        await holder.begin(async (tx) => {
          await tx`LOCK TABLE deliveries IN ACCESS EXCLUSIVE MODE`;
          // The outage is a span of real time: twice the lease.
          await Bun.sleep(6000);
        });
      } finally {
        await holder.close();
      }
    });
  });

  test("the server stopped longer than the lease: each item's changes arrive in order and once, none lost", async () => {
    const url = await pg.cluster.createDatabase();
    const store = await openPostgresStore(url);
    cleanups.push(() => store.close());
    await throughAnOutage(url, store, async () => {
      await pg.cluster.stopServer();
      try {
        // The outage is a span of real time: longer than the lease.
        await Bun.sleep(5000);
      } finally {
        await pg.cluster.startServer();
      }
    });
  });
});
