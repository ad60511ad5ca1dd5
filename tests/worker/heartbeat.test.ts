import { afterEach, describe, expect, test } from "bun:test";
import { abortableSleep } from "../../lib/async/sleep.ts";
import { createMemoryLogger, type Logger } from "../../lib/log.ts";
import type { Store, WorkerRegistry } from "../../lib/webhooks/ports.ts";
import { startHeartbeat, type WorkerSnapshot } from "../../lib/worker/heartbeat.ts";
import { createFakeClock } from "../fakes/fake-clock.ts";
import { openSqliteDb } from "../fakes/sqlite-db.ts";

const INTERVAL = 5_000;
const stores: Store[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

function setup() {
  const clock = createFakeClock();
  const { store } = openSqliteDb({ now: clock.now });
  stores.push(store);
  let inFlight = 0;
  const snapshot = (): WorkerSnapshot => ({
    id: "host-a:101:abc",
    host: "host-a",
    pid: 101,
    version: "0.1.0",
    startedAt: clock.now(),
    inFlight,
    concurrency: 16,
  });
  const start = (
    options: {
      registry?: WorkerRegistry;
      signal?: AbortSignal;
      logger?: Logger;
      onFailed?: () => void;
    } = {},
  ) =>
    startHeartbeat({
      registry: options.registry ?? store.workers,
      info: snapshot,
      intervalMs: INTERVAL,
      now: clock.now,
      sleep: clock.sleep,
      signal: options.signal,
      logger: options.logger,
      onFailed: options.onFailed,
    });
  /** The store's registry, whose first `failures` beats throw `message`. */
  const failingFirst = (failures: number, message: string): WorkerRegistry => ({
    heartbeat: async (info) => {
      if (failures > 0) {
        failures--;
        throw new Error(message);
      }
      await store.workers.heartbeat(info);
    },
    remove: (id) => store.workers.remove(id),
    list: () => store.workers.list(),
  });
  return {
    clock,
    store,
    start,
    failingFirst,
    setInFlight: (n: number) => {
      inFlight = n;
    },
  };
}

describe("startHeartbeat()", () => {
  test("records the worker at once, then once per interval with its current in-flight count", async () => {
    const { clock, store, start, setInFlight } = setup();
    const t0 = clock.now();
    const heartbeat = start();
    await clock.sleeping();
    expect(await store.workers.list()).toEqual([
      {
        id: "host-a:101:abc",
        host: "host-a",
        pid: 101,
        version: "0.1.0",
        startedAt: t0,
        lastSeenAt: t0,
        inFlight: 0,
        concurrency: 16,
        // How often it beats: when it counts as gone for the takeover of its leases.
        heartbeatMs: INTERVAL,
      },
    ]);
    expect(clock.pending).toEqual([t0 + INTERVAL]);

    setInFlight(7);
    clock.advance(INTERVAL - 1);
    expect(clock.pending).toEqual([t0 + INTERVAL]);
    clock.advance(1);
    await clock.sleeping();
    const [row] = await store.workers.list();
    expect(row?.lastSeenAt).toBe(t0 + INTERVAL);
    expect(row?.inFlight).toBe(7);
    expect(clock.pending).toEqual([t0 + 2 * INTERVAL]);
    await heartbeat.stop();
  });

  test("stop() removes the worker's row, is idempotent, and later beats write nothing", async () => {
    const { clock, store, start } = setup();
    const heartbeat = start();
    await clock.sleeping();
    expect(await store.workers.list()).toHaveLength(1);

    await Promise.all([heartbeat.stop(), heartbeat.stop()]);
    expect(await store.workers.list()).toEqual([]);
    expect(clock.pending).toEqual([]);
    await heartbeat.beat();
    expect(await store.workers.list()).toEqual([]);
  });

  test("aborting the signal stops the heartbeat and removes the row", async () => {
    const { clock, store, start } = setup();
    const controller = new AbortController();
    const heartbeat = start({ signal: controller.signal });
    await clock.sleeping();
    controller.abort();
    await heartbeat.stopped;
    expect(await store.workers.list()).toEqual([]);
  });

  test("beat() records between scheduled beats", async () => {
    const { clock, store, start, setInFlight } = setup();
    const heartbeat = start();
    await clock.sleeping();
    setInFlight(3);
    await heartbeat.beat();
    expect((await store.workers.list())[0]?.inFlight).toBe(3);
    await heartbeat.stop();
  });

  test("a failing write is logged and the next beat records again", async () => {
    const { clock, store, start, failingFirst } = setup();
    const logger = createMemoryLogger();
    const heartbeat = start({ registry: failingFirst(1, "database is locked"), logger });
    await clock.sleeping();
    expect(logger.lines).toEqual([
      "warn Could not record the worker heartbeat: database is locked",
    ]);
    expect(await store.workers.list()).toEqual([]);
    clock.advance(INTERVAL);
    await clock.sleeping();
    expect((await store.workers.list()).map((w) => w.lastSeenAt)).toEqual([clock.now()]);
    await heartbeat.stop();
  });
});

describe("startHeartbeat() through a run of failures", () => {
  test("a run of failed beats (a full disk) is one line, then one with the count when a beat succeeds; each is counted", async () => {
    const { clock, store, start, failingFirst } = setup();
    const logger = createMemoryLogger();
    let counted = 0;
    const heartbeat = start({
      registry: failingFirst(4, "database or disk is full"),
      logger,
      onFailed: () => counted++,
    });
    for (let beat = 0; beat < 4; beat++) {
      await clock.sleeping();
      clock.advance(INTERVAL);
    }
    await clock.sleeping();
    expect(logger.lines).toEqual([
      "warn Could not record the worker heartbeat: database or disk is full",
      "info Heartbeats recorded again: 3 more failed in 20.0 s after the one logged",
    ]);
    expect(counted).toBe(4);
    expect(await store.workers.list()).toHaveLength(1);
    await heartbeat.stop();
  });
});

describe("abortableSleep()", () => {
  test("resolves as soon as its signal aborts, long before the delay", async () => {
    const controller = new AbortController();
    const sleeping = abortableSleep(3_600_000, controller.signal);
    controller.abort();
    await sleeping;
    expect(controller.signal.aborted).toBe(true);
  });

  test("resolves at once when the signal is already aborted", async () => {
    await abortableSleep(3_600_000, AbortSignal.abort());
  });
});
