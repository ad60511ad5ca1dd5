import { afterEach, describe, expect, test } from "bun:test";
import type { WorkerInfo } from "../../../lib/webhooks/model.ts";
import {
  classifyWorkers,
  NO_WORKER_WARNING,
  noLiveWorkerWarning,
} from "../../../lib/webhooks/observe/staleness.ts";
import { formatAge, formatWorkerTable } from "../../../lib/webhooks/observe/workers-view.ts";
import type { Store } from "../../../lib/webhooks/ports.ts";
import { startHeartbeat } from "../../../lib/worker/heartbeat.ts";
import { createFakeClock } from "../../fakes/fake-clock.ts";
import { openSqliteDb } from "../../fakes/sqlite-db.ts";

const INTERVAL = 5_000;
const NOW = 1_700_000_000_000;

function worker(id: string, lastSeenAt: number, extra: Partial<WorkerInfo> = {}): WorkerInfo {
  return {
    id,
    host: "host-a",
    pid: 100,
    version: "0.1.0",
    startedAt: NOW - 60_000,
    lastSeenAt,
    inFlight: 0,
    concurrency: 16,
    ...extra,
  };
}

describe("classifyWorkers()", () => {
  test("marks a worker stale only once it has missed 3 heartbeat intervals", () => {
    const rows = classifyWorkers(
      [
        worker("fresh", NOW - 1_000),
        worker("three-intervals", NOW - 3 * INTERVAL),
        worker("just-over", NOW - 3 * INTERVAL - 1),
      ],
      NOW,
      INTERVAL,
    );
    expect(rows.map((w) => [w.id, w.ageMs, w.stale])).toEqual([
      ["fresh", 1_000, false],
      ["just-over", 15_001, true],
      ["three-intervals", 15_000, false],
    ]);
  });

  test("orders workers by start time and clamps the age of a clock that runs ahead to 0", () => {
    const rows = classifyWorkers(
      [
        worker("late", NOW, { startedAt: NOW - 10 }),
        worker("ahead", NOW + 2_000, { startedAt: NOW - 20 }),
      ],
      NOW,
      INTERVAL,
    );
    expect(rows.map((w) => [w.id, w.ageMs, w.stale])).toEqual([
      ["ahead", 0, false],
      ["late", 0, false],
    ]);
  });
});

describe("noLiveWorkerWarning()", () => {
  const due = { now: NOW, intervalMs: INTERVAL };

  test("warns when deliveries are due and no worker is registered", () => {
    expect(noLiveWorkerWarning({ ...due, dueCount: 3, workers: [] })).toBe(
      "No worker is running: start one with `bun run worker`",
    );
  });

  test("warns when every registered worker is stale", () => {
    const workers = [worker("dead", NOW - 60_000)];
    expect(noLiveWorkerWarning({ ...due, dueCount: 1, workers })).toBe(NO_WORKER_WARNING);
  });

  test("stays quiet when a live worker exists or nothing is due", () => {
    const workers = [worker("dead", NOW - 60_000), worker("alive", NOW - 1_000)];
    expect(noLiveWorkerWarning({ ...due, dueCount: 5, workers })).toBeNull();
    expect(noLiveWorkerWarning({ ...due, dueCount: 0, workers: [] })).toBeNull();
  });
});

describe("heartbeats seen through the registry", () => {
  const stores: Store[] = [];
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
  });

  test("a worker that stops beating turns stale after 3 intervals, a beating one stays live", async () => {
    const clock = createFakeClock(NOW);
    const { store } = openSqliteDb({ now: clock.now });
    stores.push(store);
    const info = { host: "h", pid: 1, version: "0.1.0", startedAt: NOW, inFlight: 0 };
    // "crashed" beat once and then died without removing its row.
    await store.workers.heartbeat({ ...info, id: "crashed", concurrency: 1, lastSeenAt: NOW });
    const heartbeat = startHeartbeat({
      registry: store.workers,
      info: () => ({ ...info, id: "running", concurrency: 4 }),
      intervalMs: INTERVAL,
      now: clock.now,
      sleep: clock.sleep,
    });
    await clock.sleeping();

    const statusAt = async () =>
      classifyWorkers(await store.workers.list(), clock.now(), INTERVAL).map((w) => [
        w.id,
        w.stale,
      ]);
    for (let beat = 1; beat <= 3; beat++) {
      clock.advance(INTERVAL);
      await clock.sleeping();
      expect(await statusAt()).toEqual([
        ["crashed", false],
        ["running", false],
      ]);
    }
    /** The warning with one delivery due, read from the workers' rows as they are now. */
    const warningNow = async () =>
      noLiveWorkerWarning({
        dueCount: 1,
        workers: await store.workers.list(),
        now: clock.now(),
        intervalMs: INTERVAL,
      });
    clock.advance(1);
    expect(await statusAt()).toEqual([
      ["crashed", true],
      ["running", false],
    ]);
    expect(await warningNow()).toBeNull();

    await heartbeat.stop();
    expect(await warningNow()).toBe(NO_WORKER_WARNING);
  });
});

describe("formatAge()", () => {
  test("shows seconds, minutes, hours and days as a person reads them", () => {
    expect(
      [0, 42_900, 180_000, 7_500_000, 7_200_000, 3 * 86_400_000 + 4 * 3_600_000].map(formatAge),
    ).toEqual(["0 s", "42 s", "3 min", "2 h 5 min", "2 h", "3 d 4 h"]);
  });
});

describe("formatWorkerTable()", () => {
  test("lists each worker with in-flight, uptime, last seen and status in aligned columns", () => {
    const rows = classifyWorkers(
      [
        worker("w-1", NOW - 2_000, { inFlight: 3, startedAt: NOW - 7_200_000 }),
        worker("w-2", NOW - 40_000, { host: "host-b", pid: 7, startedAt: NOW - 600_000 }),
      ],
      NOW,
      INTERVAL,
    );
    expect(formatWorkerTable(rows, NOW).split("\n")).toEqual([
      "ID   HOST    PID  VERSION  IN FLIGHT  UP      LAST SEEN  STATUS",
      "w-1  host-a  100  0.1.0    3/16       2 h     2 s ago    live",
      "w-2  host-b  7    0.1.0    0/16       10 min  40 s ago   stale",
    ]);
  });

  test("escapes control characters, tabs and newlines that a worker wrote", () => {
    const rows = classifyWorkers([worker("w\u001b[31m", NOW, { host: "a\nb\tc" })], NOW, INTERVAL);
    const table = formatWorkerTable(rows, NOW);
    expect(table.split("\n")).toHaveLength(2);
    expect(table).toContain("w\\x1b[31m");
    expect(table).toContain("a\\nb\\tc");
    expect(table).not.toContain("\u001b");
  });

  test("says so when no worker has reported", () => {
    expect(formatWorkerTable([], NOW)).toBe("No worker has reported a heartbeat.");
  });
});
