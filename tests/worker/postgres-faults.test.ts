import { expect, test } from "bun:test";
import { join } from "node:path";
import { SQL, type Subprocess } from "bun";
import { createMemoryLogger, type Logger } from "../../lib/log.ts";
import { DATABASE_NOW_MS } from "../../lib/store/postgres/clock.ts";
import { openPostgresStore } from "../../lib/store/postgres/store.ts";
import { createDeliveryWorker } from "../../lib/worker/bind.ts";
import { loadWorkerConfig } from "../../lib/worker/config.ts";
import { change } from "../fakes/change.ts";
import { skewedClockEnv } from "../fakes/faketime.ts";
import { pollUntil } from "../fakes/poll.ts";
import { describePostgres, usePostgresCluster } from "../fakes/postgres-cluster.ts";
import { hasTool } from "../fakes/system-tools.ts";
import { gate, type Responder, startFakeEndpoint } from "../fakes/webhook-endpoint.ts";

const WORKER_SCRIPT = join(import.meta.dir, "../../scripts/worker.ts");
const CLI_SCRIPT = join(import.meta.dir, "../../scripts/webhooks.ts");
/** The tests of processes with a skewed clock need libfaketime. */
const skewTest = hasTool("faketime", "PostgreSQL faults with skewed clocks") ? test : test.skip;

/** A worker process whose stderr is read as it comes, so a test can await a line. */
interface WorkerProcess {
  child: Subprocess<"ignore", "ignore", "pipe">;
  readonly log: string;
  untilLogged(pattern: RegExp): Promise<void>;
}

/** Workers and the database failing under them. A cluster of its own: these tests kill it. */
describePostgres("workers through PostgreSQL faults", () => {
  const pg = usePostgresCluster();
  const { cleanups } = pg;
  let admin: SQL;

  function adminOn(url: string): SQL {
    admin = new SQL(url, { max: 1 });
    cleanups.push(() => admin.close());
    return admin;
  }

  /** `skew`: run it with its clock this far off (libfaketime), e.g. "+120s". */
  function startWorker(
    databaseUrl: string,
    env: Record<string, string> = {},
    skew?: string,
  ): WorkerProcess {
    const child = Bun.spawn([process.execPath, WORKER_SCRIPT], {
      env: {
        ...process.env,
        ...(skew ? skewedClockEnv(skew) : {}),
        DATABASE_URL: databaseUrl,
        WEBHOOK_ALLOWED_HOSTS: "127.0.0.1",
        WEBHOOK_CONCURRENCY: "4",
        ...env,
      },
      stdin: "ignore",
      stdout: "ignore",
      stderr: "pipe",
    });
    let log = "";
    const waiters: Array<{ pattern: RegExp; resolve: () => void }> = [];
    const reading = (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of child.stderr) {
        log += decoder.decode(chunk, { stream: true });
        for (const waiter of [...waiters]) {
          if (!waiter.pattern.test(log)) continue;
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve();
        }
      }
    })();
    cleanups.push(async () => {
      child.kill("SIGKILL");
      await child.exited;
      await reading;
    });
    return {
      child,
      get log() {
        return log;
      },
      untilLogged(pattern) {
        if (pattern.test(log)) return Promise.resolve();
        return new Promise((resolve) => waiters.push({ pattern, resolve }));
      },
    };
  }

  /**
   * A fake endpoint answering with `respond`, and a store on a database of its own with one
   * webhook, "hook", pointing at it; both closed after the test.
   */
  async function hookOnNewDatabase(
    respond?: Responder,
    storeOptions?: Parameters<typeof openPostgresStore>[1],
  ) {
    const endpoint = startFakeEndpoint(respond);
    cleanups.push(() => endpoint.stop());
    const url = await pg.cluster.createDatabase();
    const store = await openPostgresStore(url, storeOptions);
    cleanups.push(() => store.close());
    await store.webhooks.create({ name: "hook", url: `${endpoint.url}/hook` });
    return { endpoint, url, store };
  }

  /** `promise`, or a failure naming `what` after `ms`: a bound on a wait, not a sleep. */
  async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`Not within ${ms} ms: ${what}`)), ms);
    });
    try {
      return await Promise.race([promise, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Polls the server (the workers are other processes) for at most 20 s until `ok`. */
  function until(read: () => Promise<number>, ok: (n: number) => boolean): Promise<number> {
    return pollUntil(read, ok, 20_000);
  }

  test("a storm of terminated backends against idle workers: none dies, all deliver after", async () => {
    const { endpoint, url, store } = await hookOnNewDatabase();
    const sql = adminOn(url);
    const database = new URL(url).pathname.slice(1);
    const listeners = () =>
      sql<Array<{ n: number }>>`
        SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = ${database} AND query ILIKE 'LISTEN%'`.then(([row]) => row?.n ?? 0);

    const workers = [startWorker(url), startWorker(url), startWorker(url)];
    await Promise.all(workers.map((worker) => worker.untilLogged(/started/)));
    expect(await until(listeners, (n) => n === 3)).toBe(3);

    // Every backend of the database, again and again: the workers' pooled connections while they
    // sleep, their LISTEN connections, and those they open to recover. A NOTIFY in between makes
    // the idle ones look for work on connections that are about to be cut.
    for (let round = 0; round < 40; round++) {
      await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE datname = ${database} AND pid <> pg_backend_pid()`;
      await sql`SELECT pg_notify('webhook_deliveries', '')`;
      if (round % 10 === 9) await until(listeners, (n) => n === 3);
    }
    expect(workers.map((worker) => worker.child.exitCode)).toEqual([null, null, null]);

    for (let i = 0; i < 30; i++) await store.queue.enqueue(change());
    const died = workers.map(async (worker) => {
      const code = await worker.child.exited;
      throw new Error(`A worker exited with ${code}: ${worker.log.slice(-1500)}`);
    });
    await Promise.race([endpoint.waitForRequests(30), ...died]);
    for (const worker of workers) worker.child.kill("SIGTERM");
    for (const death of died) death.catch(() => {});
    expect(await Promise.all(workers.map((worker) => worker.child.exited))).toEqual([0, 0, 0]);
    expect((await store.queue.stats()).successful).toBe(30);
    expect(new Set(endpoint.requests.map((r) => r.headers["webhook-id"])).size).toBe(30);
    for (const worker of workers) {
      expect(worker.log).not.toContain("    at "); // no stack trace
      // Outages are reported, not each failed call.
      expect(worker.log).not.toMatch(/Worker (claim|wait) failed/);
    }
  }, 60_000);

  skewTest(
    "a worker whose clock is 2 minutes ahead takes over no lease another worker holds",
    async () => {
      const answers = gate(); // every request waits until answers.open()
      const { endpoint, url, store } = await hookOnNewDatabase(async () => {
        await answers.promise;
        return new Response("ok");
      });
      const sql = adminOn(url);
      const database = new URL(url).pathname.slice(1);
      const listeners = () =>
        sql<Array<{ n: number }>>`
        SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = ${database} AND query ILIKE 'LISTEN%'`.then(([row]) => row?.n ?? 0);
      for (let i = 0; i < 8; i++) await store.queue.enqueue(change());

      // On time: claims all 8 (4 sent and held unanswered, 4 in its buffer).
      const onTime = startWorker(url);
      await endpoint.waitForRequests(4);
      // Two minutes ahead: its first claim comes before its first wait (and LISTEN); under its own
      // clock every lease of the other worker (40 s) would have run out long ago.
      const ahead = startWorker(url, {}, "+120s");
      await ahead.untilLogged(/started/);
      expect(await until(listeners, (n) => n === 2)).toBe(2);
      await sql`SELECT pg_notify('webhook_deliveries', '')`;
      expect(await until(listeners, (n) => n === 2)).toBe(2);

      answers.open();
      await endpoint.waitForRequests(8);
      for (const worker of [onTime, ahead]) worker.child.kill("SIGTERM");
      const codes = await Promise.all([onTime.child.exited, ahead.child.exited]);
      expect(codes).toEqual([0, 0]);

      expect(endpoint.requests).toHaveLength(8);
      expect(new Set(endpoint.requests.map((r) => r.headers["webhook-id"])).size).toBe(8);
      const [row] = await sql<Array<{ expired: number }>>`
      SELECT count(*)::int AS expired FROM attempts WHERE outcome = 'lease_expired'`;
      expect(row?.expired).toBe(0);
      expect(ahead.log).toMatch(/stopped: 0 successful/);
    },
    60_000,
  );

  skewTest(
    "a worker whose clock is 2 minutes behind takes over an expired lease and sends what is due at once; its own leases hold",
    async () => {
      const answers = gate(); // every request waits until answers.open()
      const { endpoint, url, store } = await hookOnNewDatabase(async () => {
        await answers.promise;
        return new Response("ok");
      });
      const sql = adminOn(url);
      for (let i = 0; i < 8; i++) await store.queue.enqueue(change());
      // A worker that died holding one delivery: its lease has run out by the database's clock.
      const [ghost] = await store.queue.claim({
        workerId: "ghost",
        limit: 1,
        leaseMs: 1,
        now: Date.now(),
      });
      const expired = () =>
        sql<Array<{ n: number }>>`
        SELECT count(*)::int AS n FROM deliveries
        WHERE state = 'delivering' AND lease_expires_at <= ${sql.unsafe(DATABASE_NOW_MS)}`.then(
          ([row]) => row?.n ?? 0,
        );
      expect(await until(expired, (n) => n === 1)).toBe(1);

      // Two minutes behind: by its own clock the 7 queued are not due for 2 minutes, nor has the
      // ghost's lease run out. A lease only the timeout + 1 s long makes it renew every claim
      // right before its request (recheck), with the lease end shifted into its clock.
      const behind = startWorker(
        url,
        { WEBHOOK_TIMEOUT_MS: "10000", WEBHOOK_LEASE_MS: "11000" },
        "-120s",
      );
      await within(endpoint.waitForRequests(4), 20_000, "the first 4 requests");

      // All 8 are its own (4 sent and held unanswered, 4 in its buffer), leased by the database's
      // clock: none could be taken by a worker on time.
      const [leases] = await sql<Array<{ n: number; ghost: number; least: number; most: number }>>`
      SELECT count(*)::int AS n, count(*) FILTER (WHERE lease_owner = 'ghost')::int AS ghost,
        min(lease_expires_at - ${sql.unsafe(DATABASE_NOW_MS)})::int AS least,
        max(lease_expires_at - ${sql.unsafe(DATABASE_NOW_MS)})::int AS most
      FROM deliveries WHERE state = 'delivering'`;
      expect(leases).toMatchObject({ n: 8, ghost: 0 });
      expect(leases?.least).toBeGreaterThan(0);
      expect(leases?.most).toBeLessThanOrEqual(11_000);
      const onTime = await store.queue.claim({
        workerId: "on time",
        limit: 100,
        leaseMs: 11_000,
        now: Date.now(),
      });
      expect(onTime).toEqual([]);
      // Its heartbeat is stamped by the database too: it looks alive, not 2 minutes silent.
      const [beat] = await sql<Array<{ age: number }>>`
      SELECT (${sql.unsafe(DATABASE_NOW_MS)} - last_seen_at)::int AS age FROM workers`;
      expect(beat?.age).toBeGreaterThanOrEqual(0);
      expect(beat?.age).toBeLessThan(30_000);

      answers.open();
      await within(endpoint.waitForRequests(8), 20_000, "all 8 requests");
      behind.child.kill("SIGTERM");
      expect(await behind.child.exited).toBe(0);

      expect(endpoint.requests).toHaveLength(8);
      expect(new Set(endpoint.requests.map((r) => r.headers["webhook-id"])).size).toBe(8);
      expect(await store.queue.stats()).toMatchObject({ successful: 8, delivering: 0 });
      // The ghost's attempt is the only one lost; no claim of the worker behind ran out or was
      // given back unsent.
      const lost = await sql<Array<{ delivery_id: string; worker_id: string }>>`
      SELECT delivery_id::text, worker_id FROM attempts WHERE outcome = 'lease_expired'`;
      expect([...lost]).toEqual([{ delivery_id: String(ghost?.delivery.id), worker_id: "ghost" }]);
      expect(behind.log).toMatch(
        /stopped: 8 successful, 0 to retry, 0 failed, 0 discarded, 0 released/,
      );
    },
    60_000,
  );

  skewTest(
    "a worker whose clock is 2 minutes ahead sends the claims it holds: renewing them right before each request withdraws none",
    async () => {
      const { endpoint, url, store } = await hookOnNewDatabase();
      for (let i = 0; i < 8; i++) await store.queue.enqueue(change());
      // Every claim is renewed before its request (a lease only the timeout + 1 s long); read
      // unshifted, the renewed lease would have ended 2 minutes ago by its clock.
      const ahead = startWorker(
        url,
        { WEBHOOK_TIMEOUT_MS: "10000", WEBHOOK_LEASE_MS: "11000" },
        "+120s",
      );
      await within(endpoint.waitForRequests(8), 20_000, "8 requests");
      ahead.child.kill("SIGTERM");
      expect(await ahead.child.exited).toBe(0);
      expect(new Set(endpoint.requests.map((r) => r.headers["webhook-id"])).size).toBe(8);
      expect(ahead.log).toMatch(
        /stopped: 8 successful, 0 to retry, 0 failed, 0 discarded, 0 released/,
      );
    },
    60_000,
  );

  skewTest(
    "a worker whose clock is 2 minutes behind spaces a rate-limited webhook's requests and waits for retries by the database's clock",
    async () => {
      const seen = new Set<string>();
      const endpoint = startFakeEndpoint((request) => {
        if (request.path !== "/flaky") return new Response("ok");
        // Each delivery's first attempt fails: retried after 0.8-1.2 s (WEBHOOK_RETRY_BASE_MS).
        const id = request.headers["webhook-id"] ?? "";
        if (seen.has(id)) return new Response("ok");
        seen.add(id);
        return new Response("try again", { status: 500 });
      });
      cleanups.push(() => endpoint.stop());
      const url = await pg.cluster.createDatabase();
      const store = await openPostgresStore(url);
      cleanups.push(() => store.close());
      // One request every 250 ms: send slots reserved by the database's clock.
      await store.webhooks.create({
        name: "limited",
        url: `${endpoint.url}/limited`,
        maxPerSecond: 4,
      });
      await store.webhooks.create({ name: "flaky", url: `${endpoint.url}/flaky` });
      for (let i = 0; i < 4; i++) await store.queue.enqueue(change()); // one for each webhook

      const behind = startWorker(
        url,
        { WEBHOOK_RETRY_BASE_MS: "1000", WEBHOOK_RETRY_MAX_MS: "1000" },
        "-120s",
      );
      // Read in its own clock unshifted, a send slot or a retry's due time would lie 2 minutes
      // ahead (its waits capped at a minute); stamped with it, 2 minutes past (no wait at all).
      await within(endpoint.waitForRequests(12), 20_000, "8 deliveries and 4 retries");
      behind.child.kill("SIGTERM");
      expect(await behind.child.exited).toBe(0);

      const limited = endpoint.requests.filter((request) => request.path === "/limited");
      const times = limited.map((request) => request.at).sort((a, b) => a - b);
      const gaps = times.slice(1).map((t, i) => t - (times[i] ?? 0));
      expect(gaps).toHaveLength(3);
      // Slots 250 ms apart. One late arrival shortens the gap after it (seen: 122 ms on a loaded
      // machine), so each gap is only held clear of a burst and the span to most of three slots;
      // without the limit all four arrive within a few ms.
      expect(Math.min(...gaps)).toBeGreaterThanOrEqual(50);
      expect((times.at(-1) ?? 0) - (times[0] ?? 0)).toBeGreaterThanOrEqual(500);

      const arrivals = new Map<string, number[]>();
      for (const request of endpoint.requests.filter((r) => r.path === "/flaky")) {
        const id = request.headers["webhook-id"] ?? "";
        arrivals.set(id, [...(arrivals.get(id) ?? []), request.at]);
      }
      expect([...arrivals.values()].map((times) => times.length)).toEqual([2, 2, 2, 2]);
      for (const [first = 0, retry = 0] of arrivals.values()) {
        expect(retry - first).toBeGreaterThanOrEqual(750);
      }
      expect(await store.queue.stats()).toMatchObject({ successful: 8 });
    },
    60_000,
  );

  skewTest("deliveries queued by a command whose clock is 30 s ahead are due at once", async () => {
    const url = await pg.cluster.createDatabase();
    const store = await openPostgresStore(url);
    cleanups.push(() => store.close());
    await store.webhooks.create({ name: "hook", url: "http://127.0.0.1:9/hook" });
    const cli = Bun.spawn([process.execPath, CLI_SCRIPT, "emit", "item.created"], {
      env: { ...process.env, ...skewedClockEnv("+30s"), DATABASE_URL: url },
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(await cli.exited).toBe(0);
    const sql = adminOn(url);
    const [row] = await sql<Array<{ ahead: number; n: number }>>`
      SELECT count(*)::int AS n,
        max(next_attempt_at - (extract(epoch from now()) * 1000)::bigint)::int AS ahead
      FROM deliveries`;
    expect(row?.n).toBe(1);
    // Due by the database's clock: not in the command's 30 s future.
    expect(row?.ahead).toBeLessThanOrEqual(0);
  });

  test("after a stopped database, delivery resumes when it is back, not when the backoff ends", async () => {
    const endpoint = startFakeEndpoint();
    cleanups.push(() => endpoint.stop());
    const url = await pg.cluster.createDatabase();
    const lines = createMemoryLogger();
    const { open: unreachable, promise: reported } = gate();
    const logger = {
      ...lines,
      warn: (message: string) => {
        lines.warn(message);
        if (message.startsWith("Database unreachable")) unreachable();
      },
    } as unknown as Logger;
    const store = await openPostgresStore(url, { logger });
    cleanups.push(() => store.close());
    await store.webhooks.create({ name: "hook", url: `${endpoint.url}/hook` });

    const { open: claimFailed, promise: failedClaim } = gate();
    const worker = createDeliveryWorker({
      store,
      config: loadWorkerConfig({ DATABASE_URL: url, WEBHOOK_ALLOWED_HOSTS: "127.0.0.1" }),
      logger,
      // A failed call pauses the loop for 30 s (the cap), longer than this test may take: only
      // the database's return can end the pause in time.
      claimErrorDelayMs: 600_000,
      hooks: {
        // The claim, or the look for work before it, fails: the loop pauses.
        onError: (_error, { phase }) => {
          if (phase === "claim" || phase === "wait") claimFailed();
        },
      },
    });
    const stop = new AbortController();
    const running = worker.run({ signal: stop.signal });
    cleanups.push(async () => {
      stop.abort();
      await running;
    });

    await pg.cluster.stopServer();
    try {
      await reported;
      await failedClaim;
    } finally {
      await pg.cluster.startServer();
    }
    await store.queue.enqueue(change());
    await endpoint.waitForRequests(1);
    stop.abort();
    await running;

    expect(lines.lines.filter((line) => line.includes("Database unreachable"))).toHaveLength(1);
    expect(lines.lines.filter((line) => /Database back after \d+\.\d s/.test(line))).toHaveLength(
      1,
    );
    expect(lines.lines.filter((line) => /Worker (claim|wait) failed/.test(line))).toEqual([]);
  }, 20_000);

  test("an outage longer than the result retry: nothing new is sent, results are written when it is back", async () => {
    const answers = gate(); // every request waits until answers.open()
    // finish() itself retries a lost connection for 0.2 s only: the outage outlasts it.
    const { endpoint, url, store } = await hookOnNewDatabase(
      async () => {
        await answers.promise;
        return new Response("ok");
      },
      { reconnectWaitMs: 200 },
    );
    for (let i = 0; i < 12; i++) await store.queue.enqueue(change());

    let finishFailures = 0;
    const { open: allFailed, promise: failed } = gate();
    let recorded = 0;
    const { open: allRecorded, promise: done } = gate();
    const worker = createDeliveryWorker({
      store,
      config: {
        ...loadWorkerConfig({ DATABASE_URL: url, WEBHOOK_ALLOWED_HOSTS: "127.0.0.1" }),
        concurrency: 4,
        prefetch: 8,
      },
      hooks: {
        onError: (_error, { phase }) => {
          if (phase === "finish" && ++finishFailures === 4) allFailed();
        },
        onFinished: () => {
          if (++recorded === 12) allRecorded();
        },
      },
    });
    const stop = new AbortController();
    const running = worker.run({ signal: stop.signal });
    cleanups.push(async () => {
      stop.abort();
      await running;
    });
    await endpoint.waitForRequests(4); // 4 in flight, 8 held

    await pg.cluster.stopServer();
    try {
      // The worker has seen the database go (any call of its store tells it so).
      await store.queue.stats().catch(() => {});
      expect(store.reachable).toBe(false);
      answers.open();
      await failed;
      // Four results wait in memory; none of the eight held claims was sent.
      expect(endpoint.requests).toHaveLength(4);
    } finally {
      await pg.cluster.startServer();
    }

    // Back: the four results are written, then the held claims go out, each once.
    await done;
    stop.abort();
    await running;
    expect(worker.counts.successful).toBe(12);
    expect(worker.counts.discarded).toBe(0);
    expect(endpoint.requests).toHaveLength(12);
    expect(new Set(endpoint.requests.map((r) => r.headers["webhook-id"])).size).toBe(12);
    expect(await store.queue.stats()).toMatchObject({ successful: 12, delivering: 0 });
  }, 20_000);

  test("a stopped database for longer than the lease under 3 busy workers: nothing is sent twice, everything ends successful", async () => {
    const total = 240;
    // Answers after 50 ms, so 12 requests in flight take a few seconds for all: the outage falls
    // in the middle of the work.
    const { endpoint, url, store } = await hookOnNewDatabase(async () => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      return new Response("ok");
    });
    await store.queue.enqueueMany(Array.from({ length: total }, () => change()));
    const env = {
      WEBHOOK_TIMEOUT_MS: "1000",
      WEBHOOK_LEASE_MS: "2000",
      WORKER_HEARTBEAT_MS: "1000",
    };
    const workers = [startWorker(url, env), startWorker(url, env), startWorker(url, env)];
    await within(endpoint.waitForRequests(24), 20_000, "24 requests");

    const sql = adminOn(url);
    const [held] = await sql<Array<{ remaining: number }>>`
      SELECT max(lease_expires_at - ${sql.unsafe(DATABASE_NOW_MS)})::int AS remaining
      FROM deliveries WHERE state = 'delivering'`;
    await sql.close();
    const stopped = performance.now();
    await pg.cluster.stopServer();
    try {
      // The outage's length is what this test is about: longer than every lease then held.
      await Bun.sleep(4000);
    } finally {
      await pg.cluster.startServer();
    }
    expect(performance.now() - stopped).toBeGreaterThan(held?.remaining ?? 0);
    // A worker that did not see the outage claims the moment the database is back: it takes no
    // lease of a live worker over (each claim is a first attempt), and gives its claims back.
    const eager = await store.queue.claim({
      workerId: "newcomer",
      limit: total,
      leaseMs: 2000,
      now: Date.now(),
    });
    expect(eager.filter((claim) => claim.attempt > 1)).toEqual([]);
    await store.queue.release(eager);

    const deadline = performance.now() + 60_000;
    while ((await store.queue.stats()).successful < total && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    for (const worker of workers) worker.child.kill("SIGTERM");
    expect(await Promise.all(workers.map((worker) => worker.child.exited))).toEqual([0, 0, 0]);
    expect(await store.queue.stats()).toMatchObject({ successful: total, delivering: 0 });
    const ids = endpoint.requests.map((request) => request.headers["webhook-id"]);
    expect(new Set(ids).size).toBe(total);
    expect(ids).toHaveLength(total);
  }, 120_000);
});
