import { describe, expect, test } from "bun:test";
import {
  createWorker,
  type Worker,
  type WorkerCollaborators,
  type WorkerOptions,
} from "../../../lib/webhooks/delivery/loop.ts";
import {
  type Availability,
  createOutageGate,
  recordAfterFailure,
} from "../../../lib/webhooks/delivery/loop-outage.ts";
import type { Claim, Delivered } from "../../../lib/webhooks/model.ts";
import { claimFixture } from "../../fakes/claim.ts";
import { gate } from "../../fakes/webhook-endpoint.ts";

/** An in-memory queue of `count` claims whose deliveries finish when the test says so. */
function fakeQueue(count: number) {
  const pending = Array.from({ length: count }, (_, i) => fakeClaim(i + 1));
  const finished: number[] = [];
  const released: number[] = [];
  const holds = new Map<number, () => void>();
  const opened = new Set<number>();
  let inFlight = 0;
  let started = 0;
  let maxInFlight = 0;
  const progress: Array<() => void> = [];
  const tick = () => {
    for (const wake of progress.splice(0)) wake();
  };
  let waits = 0;
  const waiting: Array<() => void> = [];
  let autoFinish = false;
  let claimed = 0;
  const collaborators: WorkerCollaborators = {
    async claim(limit) {
      const taken = pending.splice(0, limit);
      claimed += taken.length;
      tick();
      return taken;
    },
    async renew(claims) {
      return claims;
    },
    async send(claim, signal) {
      inFlight++;
      started++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      tick();
      try {
        // Yield once so deliveries started together are in flight together.
        await new Promise((resolve) => setImmediate(resolve));
        if (!autoFinish && !opened.has(claim.delivery.id)) {
          const hold = gate();
          holds.set(claim.delivery.id, hold.open);
          await new Promise<void>((resolve, reject) => {
            hold.promise.then(resolve);
            if (signal.aborted) reject(new Error("aborted"));
            signal.addEventListener("abort", () => reject(new Error("aborted")), { once: true });
          });
        }
        return success;
      } finally {
        inFlight--;
      }
    },
    async finish(claim) {
      finished.push(claim.delivery.id);
      tick();
      return true;
    },
    async release(claims) {
      released.push(...claims.map((c) => c.delivery.id));
    },
    async waitForWork(signal) {
      waits++;
      for (const wake of waiting.splice(0)) wake();
      await new Promise<void>((resolve) => {
        if (signal.aborted) resolve();
        else signal.addEventListener("abort", () => resolve(), { once: true });
      });
    },
  };
  return {
    collaborators,
    pending,
    finished,
    released,
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    /** Resolves when the worker next goes to sleep waiting for work. */
    untilWaiting() {
      return new Promise<void>((resolve) => waiting.push(resolve));
    },
    get waits() {
      return waits;
    },
    autoFinish() {
      autoFinish = true;
      for (const open of holds.values()) open();
    },
    finishOne(id: number) {
      opened.add(id);
      holds.get(id)?.();
    },
    /** Resolves once `n` deliveries are in flight at the same time. */
    async untilInFlight(n: number) {
      while (inFlight < n) await new Promise<void>((resolve) => progress.push(resolve));
    },
    /** Resolves once `n` deliveries have been claimed in all. */
    async untilClaimed(n: number) {
      while (claimed < n) await new Promise<void>((resolve) => progress.push(resolve));
    },
    get started() {
      return started;
    },
    /** Resolves once `n` results have been recorded. */
    async untilFinished(n: number) {
      while (finished.length < n) await new Promise<void>((resolve) => progress.push(resolve));
    },
    /** Resolves once `n` deliveries have been started in all. */
    async untilStarted(n: number) {
      while (started < n) await new Promise<void>((resolve) => progress.push(resolve));
    },
  };
}

/** A worker over `queue` that records, sorted, the ids each claim is told the worker holds. */
function recordingHolding(queue: ReturnType<typeof fakeQueue>, options: WorkerOptions) {
  const seen: number[][] = [];
  const worker = createWorker(
    {
      ...queue.collaborators,
      claim(limit, holding) {
        seen.push([...holding].sort((a, b) => a - b));
        return queue.collaborators.claim(limit, holding);
      },
    },
    options,
  );
  return { worker, seen };
}

const success: Delivered = {
  record: {
    startedAt: 0,
    durationMs: 1,
    statusCode: 200,
    outcome: "success",
    error: null,
    responseHeaders: null,
    responseBody: null,
  },
  outcome: { state: "successful" },
};

const fakeClaim = (id: number): Claim => claimFixture({ id });

/** A worker of `concurrency` slots, no pause after a failed claim, its errors as `phase: message`. */
function reportingWorker(
  collaborators: WorkerCollaborators,
  concurrency: number,
  errors: string[],
) {
  return createWorker(collaborators, {
    concurrency,
    claimErrorDelayMs: 0,
    hooks: {
      onError: (error, { phase }) => errors.push(`${phase}: ${(error as Error).message}`),
    },
  });
}

/** Runs `worker` until it waits for work, then stops it. */
async function runUntilIdle(worker: Worker, queue: { untilWaiting(): Promise<void> }) {
  const stop = new AbortController();
  const asleep = queue.untilWaiting();
  const running = worker.run({ signal: stop.signal });
  await asleep;
  stop.abort();
  await running;
}

/** Runs `worker` until `finish()`: every request answered from then on, the run stopped, awaited. */
function start(worker: Worker, queue: { autoFinish(): void }) {
  const stop = new AbortController();
  const running = worker.run({ signal: stop.signal });
  return {
    async finish() {
      queue.autoFinish();
      stop.abort();
      await running;
    },
  };
}

describe("createWorker", () => {
  test("runOnce() delivers everything due with at most `concurrency` in flight", async () => {
    const queue = fakeQueue(50);
    queue.autoFinish();
    const worker = createWorker(queue.collaborators, { concurrency: 4 });
    await worker.runOnce();
    expect(queue.finished.sort((a, b) => a - b)).toEqual(
      Array.from({ length: 50 }, (_, i) => i + 1),
    );
    expect(queue.maxInFlight).toBe(4);
    expect(worker.counts).toMatchObject({ claimed: 50, successful: 50 });
    expect(worker.inFlight).toBe(0);
  });

  test("run() keeps `concurrency` requests in flight and `prefetch` more claimed", async () => {
    const queue = fakeQueue(10);
    const worker = createWorker(queue.collaborators, { concurrency: 3, prefetch: 2 });
    const run = start(worker, queue);
    await queue.untilInFlight(3);
    await queue.untilClaimed(5);
    expect(queue.pending).toHaveLength(5);
    // A request ends: a claim from the buffer takes its slot, and the buffer is topped up.
    queue.finishOne(1);
    await queue.untilStarted(4);
    await queue.untilClaimed(6);
    expect(queue.inFlight).toBe(3);
    expect(queue.pending).toHaveLength(4);
    expect(queue.maxInFlight).toBe(3);
    await run.finish();
  });

  test("without a prefetch, a slot freed beside slow requests is claimed for once the claim window ends", async () => {
    const queue = fakeQueue(20);
    const worker = createWorker(queue.collaborators, { concurrency: 8, prefetch: 0 });
    const run = start(worker, queue);
    await queue.untilInFlight(8);
    expect(queue.pending).toHaveLength(12);
    // One request ends while seven hang: one slot is less than a chunk (a quarter of 8), yet
    // delivery 9 starts, after CLAIM_WINDOW_MS, not when the slow ones end.
    queue.finishOne(1);
    await queue.untilStarted(9);
    expect(queue.pending).toHaveLength(11);
    expect(queue.inFlight).toBe(8);
    await run.finish();
  });

  test("a claim is told which deliveries the worker still handles, so it never takes their leases over", async () => {
    const queue = fakeQueue(6);
    const { worker, seen } = recordingHolding(queue, { concurrency: 2 });
    const run = start(worker, queue);
    await queue.untilInFlight(2);
    expect(seen[0]).toEqual([]);
    queue.finishOne(1);
    await queue.untilStarted(3);
    // The claim for the freed slot came while delivery 2 was still in flight; 1 was done.
    expect(seen.at(-1)).toEqual([2]);
    await run.finish();
  });

  test("a claim is told the deliveries held in the buffer too: a lease run out there is never taken over by the worker itself", async () => {
    const queue = fakeQueue(10);
    const { worker, seen } = recordingHolding(queue, { concurrency: 1, prefetch: 2 });
    const run = start(worker, queue);
    await queue.untilInFlight(1);
    await queue.untilClaimed(3); // 1 in flight, 2 and 3 held
    queue.finishOne(1);
    await queue.untilStarted(2);
    await queue.untilClaimed(4);
    // Topped up with 2 in flight and 3 still in the buffer: both are the worker's.
    expect(seen.at(-1)).toEqual(expect.arrayContaining([2, 3]));
    expect(seen.at(-1)).not.toContain(4);
    await run.finish();
  });

  test("run() stops claiming on abort, releases unstarted claims, lets requests finish", async () => {
    const queue = fakeQueue(10);
    const worker = createWorker(queue.collaborators, { concurrency: 2, prefetch: 2 });
    const stop = new AbortController();
    const running = worker.run({ signal: stop.signal });
    await queue.untilInFlight(2);
    await queue.untilClaimed(4);
    stop.abort();
    queue.autoFinish();
    await running;
    expect(queue.finished.sort()).toEqual([1, 2]);
    expect(queue.released.sort()).toEqual([3, 4]);
    expect(queue.pending).toHaveLength(6);
  });

  test("run() releases the deliveries still in flight when abortInFlight fires", async () => {
    const queue = fakeQueue(10);
    const worker = createWorker(queue.collaborators, { concurrency: 3, prefetch: 0 });
    const stop = new AbortController();
    const hard = new AbortController();
    const running = worker.run({ signal: stop.signal, abortInFlight: hard.signal });
    await queue.untilInFlight(3);
    queue.finishOne(2);
    await queue.untilStarted(4);
    stop.abort();
    hard.abort();
    await running;
    // 4 was claimed into the slot 2 left, and was in flight too.
    expect(queue.finished).toEqual([2]);
    expect(queue.released.sort()).toEqual([1, 3, 4]);
    expect(worker.counts).toMatchObject({ successful: 1, released: 3 });
  });

  test("run() waits for work when fewer deliveries are due than slots", async () => {
    const queue = fakeQueue(1);
    queue.autoFinish();
    const worker = createWorker(queue.collaborators, { concurrency: 4 });
    await runUntilIdle(worker, queue);
    expect(queue.finished).toEqual([1]);
    expect(queue.waits).toBe(1);
  });

  test("run() reports a failing claim and carries on", async () => {
    const queue = fakeQueue(3);
    queue.autoFinish();
    const errors: string[] = [];
    let failures = 1;
    const collaborators: WorkerCollaborators = {
      ...queue.collaborators,
      async claim(limit, holding) {
        if (failures-- > 0) throw new Error("database is locked");
        return queue.collaborators.claim(limit, holding);
      },
    };
    const worker = reportingWorker(collaborators, 4, errors);
    await runUntilIdle(worker, queue);
    expect(errors).toEqual(["claim: database is locked"]);
    expect(queue.finished.sort()).toEqual([1, 2, 3]);
  });

  test("a claim that succeeds while a result write fails ends no run of failures: only the write succeeding ends its run", async () => {
    const queue = fakeQueue(2);
    queue.autoFinish();
    const events: string[] = [];
    const writeFailed = gate();
    let claims = 0;
    let finishFailures = 1;
    const collaborators: WorkerCollaborators = {
      ...queue.collaborators,
      async claim(limit, holding) {
        // The second claim, made while the first result is written, answers after that write failed.
        if (++claims === 2) await writeFailed.promise;
        return queue.collaborators.claim(limit, holding);
      },
      async finish(claim, delivered) {
        if (finishFailures-- > 0) {
          writeFailed.open();
          throw new Error("database or disk is full");
        }
        return queue.collaborators.finish(claim, delivered);
      },
    };
    const worker = createWorker(collaborators, {
      concurrency: 1,
      hooks: {
        onError: (_error, { phase }) => events.push(`${phase} failed`),
        onStoreBack: (calls) => events.push(`${calls} back, ${queue.finished.length} recorded`),
      },
    });
    await worker.runOnce();
    expect(queue.finished.sort()).toEqual([1, 2]);
    expect(events).toEqual(["finish failed", "results back, 1 recorded"]);
  });

  test("runOnce() rejects on a failing claim, gives its unstarted claims back at once and lets the request in flight finish", async () => {
    const queue = fakeQueue(4);
    let claims = 0;
    let failed = () => {};
    const claimFailed = new Promise<void>((resolve) => {
      failed = resolve;
    });
    const collaborators: WorkerCollaborators = {
      ...queue.collaborators,
      async claim(limit, holding) {
        if (++claims === 2) {
          failed();
          throw new Error("database is locked");
        }
        return queue.collaborators.claim(limit, holding);
      },
    };
    const worker = createWorker(collaborators, { concurrency: 1, prefetch: 4 });
    let settled = false;
    const drained = worker.runOnce().finally(() => {
      settled = true;
    });
    drained.catch(() => {});
    // All four claimed: 1 in flight, 2-4 held ready.
    await queue.untilInFlight(1);
    expect(queue.pending).toHaveLength(0);

    // 1 ends and 2 takes its slot; the buffer is low, so the worker claims again, and that fails.
    queue.finishOne(1);
    await claimFailed;
    // Once the failure has run its course (microtasks only), before a macrotask turn.
    await new Promise((resolve) => setImmediate(resolve));
    // 3 and 4 went back without waiting for 2, whose request may take up to its timeout.
    expect(queue.released.sort()).toEqual([3, 4]);
    expect(queue.inFlight).toBe(1);
    expect(settled).toBe(false);

    queue.finishOne(2);
    await expect(drained).rejects.toThrow("database is locked");
    expect(queue.finished.sort()).toEqual([1, 2]);
    expect(queue.started).toBe(2);
    expect(worker.counts).toMatchObject({ claimed: 4, successful: 2, released: 2 });
    expect(worker.inFlight).toBe(0);
  });

  test("run() survives a failing look for work while idle, reports it and looks again", async () => {
    const queue = fakeQueue(0);
    const errors: string[] = [];
    let failures = 3;
    let looks = 0;
    const { open: lookedAgain, promise: healthy } = gate();
    const collaborators: WorkerCollaborators = {
      ...queue.collaborators,
      async waitForWork(signal) {
        looks++;
        if (failures-- > 0) throw new Error("terminating connection due to administrator command");
        lookedAgain();
        return queue.collaborators.waitForWork(signal);
      },
    };
    const worker = reportingWorker(collaborators, 2, errors);
    const stop = new AbortController();
    const running = worker.run({ signal: stop.signal });
    await healthy;
    stop.abort();
    await running;
    expect(looks).toBe(4);
    expect(errors).toEqual(
      Array.from({ length: 3 }, () => "wait: terminating connection due to administrator command"),
    );
  });

  test("run() ends the pause after a failed claim as soon as the database answers again", async () => {
    const queue = fakeQueue(2);
    queue.autoFinish();
    let down = true;
    const reachable = Promise.withResolvers<void>();
    const claimFailed = Promise.withResolvers<void>();
    const collaborators: WorkerCollaborators = {
      ...queue.collaborators,
      async claim(limit, holding) {
        if (down) {
          claimFailed.resolve();
          throw Object.assign(new Error("connection refused"), { unreachable: true });
        }
        return queue.collaborators.claim(limit, holding);
      },
      availability: {
        reachable: () => !down,
        isUnreachable: (error) => (error as { unreachable?: boolean }).unreachable === true,
        untilReachable: (signal) =>
          Promise.race([
            reachable.promise,
            new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve())),
          ]),
      },
    };
    // Without the cut the pause would last ten minutes, far beyond the test's timeout.
    const worker = createWorker(collaborators, { concurrency: 2, claimErrorDelayMs: 600_000 });
    const stop = new AbortController();
    const running = worker.run({ signal: stop.signal });
    await claimFailed.promise;
    const asleep = queue.untilWaiting();
    down = false;
    reachable.resolve();
    await asleep;
    stop.abort();
    await running;
    expect(queue.finished.sort()).toEqual([1, 2]);
  });

  test("run() does not cut the pause short for an error that is not an outage", async () => {
    const queue = fakeQueue(1);
    queue.autoFinish();
    let claims = 0;
    const collaborators: WorkerCollaborators = {
      ...queue.collaborators,
      async claim(limit, holding) {
        claims++;
        if (claims === 1) throw new Error("syntax error");
        return queue.collaborators.claim(limit, holding);
      },
      availability: {
        reachable: () => true,
        isUnreachable: () => false,
        untilReachable: async () => {},
      },
    };
    const worker = createWorker(collaborators, { concurrency: 2, claimErrorDelayMs: 600_000 });
    const stop = new AbortController();
    const running = worker.run({ signal: stop.signal });
    // The pause is running: only abort ends it, and nothing more was claimed meanwhile.
    await new Promise((resolve) => setImmediate(resolve));
    stop.abort();
    await running;
    expect(claims).toBe(1);
    expect(queue.finished).toEqual([]);
  });

  test("run() starts no request while the store is unreachable and records held results when it is back", async () => {
    const queue = fakeQueue(6);
    let reachable = true;
    let back = () => {};
    let isBack = new Promise<void>((resolve) => {
      back = resolve;
    });
    const outage = Object.assign(new Error("connection refused"), { unreachable: true });
    let finishFailures = 0;
    const { open: failedTwice, promise: twice } = gate();
    const collaborators: WorkerCollaborators = {
      ...queue.collaborators,
      async finish(claim, delivered) {
        if (!reachable) {
          if (++finishFailures === 2) failedTwice();
          throw outage;
        }
        return queue.collaborators.finish(claim, delivered);
      },
      availability: {
        isUnreachable: (error) => error === outage,
        reachable: () => reachable,
        untilReachable: (signal) =>
          reachable
            ? Promise.resolve()
            : Promise.race([
                isBack,
                new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve())),
              ]),
      },
    };
    const worker = createWorker(collaborators, { concurrency: 2, prefetch: 4 });
    const stop = new AbortController();
    const running = worker.run({ signal: stop.signal });
    await queue.untilInFlight(2);

    // The database goes; the two requests in flight end.
    reachable = false;
    queue.finishOne(1);
    queue.finishOne(2);
    await twice;
    expect(queue.finished).toEqual([]);
    expect(queue.started).toBe(2); // the four held claims wait unsent

    // It is back: the two results are written, then the held claims go out.
    reachable = true;
    back();
    isBack = Promise.resolve();
    queue.autoFinish();
    await queue.untilFinished(6);
    stop.abort();
    await running;
    expect(queue.finished.slice(0, 2).sort()).toEqual([1, 2]);
    expect(queue.started).toBe(6);
    expect(worker.counts.successful).toBe(6);
  });
});

describe("createWorker renewals", () => {
  test("runOnce() gives back the claims of a failed renewal, and sends each once when claimed again", async () => {
    const pending = [fakeClaim(1), fakeClaim(2)];
    const sent: number[] = [];
    const released: number[] = [];
    let renewals = 0;
    const freshlyClaimed = new Set<Claim>();
    const worker = createWorker(
      {
        async claim(limit) {
          const taken = pending.splice(0, limit).map((c) => ({ ...c }));
          for (const claim of taken) freshlyClaimed.add(claim);
          return taken;
        },
        async renew() {
          renewals++;
          throw new Error("deadlock detected");
        },
        async send(claim) {
          sent.push(claim.delivery.id);
          return success;
        },
        async finish() {
          return true;
        },
        async release(claims) {
          released.push(...claims.map((c) => c.delivery.id));
          pending.push(...claims.map((c) => fakeClaim(c.delivery.id)));
        },
        async waitForWork() {},
      },
      {
        concurrency: 1,
        prefetch: 2,
        // The first claims look stale (say, a lease too short for the request); later ones not.
        freshness: {
          now: () => 0,
          remember() {},
          prepare: (claim) => (renewals > 0 && freshlyClaimed.has(claim) ? claim : null),
        },
      },
    );
    await worker.runOnce();
    expect(renewals).toBe(1);
    expect(released.sort()).toEqual([1, 2]);
    expect(sent.sort()).toEqual([1, 2]);
  });
});

describe("outages and failed writes", () => {
  test("createOutageGate().opened() returns at once on an aborted signal, so it cannot spin while the database is down", async () => {
    let waits = 0;
    const availability: Partial<Availability> = {
      reachable: () => false,
      // As the store's: returns at once on an aborted signal, the database still down.
      untilReachable: async () => {
        waits++;
      },
    };
    const gate = createOutageGate(availability);
    expect(gate.closed()).toBe(true);
    await gate.opened(AbortSignal.abort());
    expect(waits).toBe(0);
    expect(gate.closed()).toBe(true);
  });

  test("recordAfterFailure() retries a write that failed for another reason than an outage, until it is recorded", async () => {
    const claim = fakeClaim(1);
    let tries = 0;
    const slept: number[] = [];
    const errors: string[] = [];
    const recorded = await recordAfterFailure(
      {
        async finish() {
          tries++;
          if (tries < 2) throw new Error("database is locked");
          return true;
        },
        isUnreachable: () => false,
      },
      {
        claim,
        delivered: success,
        signal: new AbortController().signal,
        hooks: { onError: (error) => errors.push((error as Error).message) },
        sleep: async (ms) => {
          slept.push(ms);
        },
      },
      new Error("database is locked"),
    );
    expect(recorded).toBe(true);
    expect(tries).toBe(2);
    expect(slept).toEqual([100, 200]);
    expect(errors).toEqual(["database is locked", "database is locked"]);
  });

  test("recordAfterFailure() keeps its pauses within maxDelayMs (the worker's quarter of a lease)", async () => {
    let tries = 0;
    const slept: number[] = [];
    const recorded = await recordAfterFailure(
      {
        async finish() {
          if (++tries < 5) throw new Error("disk I/O error");
          return true;
        },
      },
      {
        claim: fakeClaim(1),
        delivered: success,
        signal: new AbortController().signal,
        hooks: {},
        maxDelayMs: 250,
        sleep: async (ms) => {
          slept.push(ms);
        },
      },
      new Error("disk I/O error"),
    );
    expect(recorded).toBe(true);
    expect(slept).toEqual([100, 200, 250, 250, 250]);
  });

  test("recordAfterFailure() gives up only on a hard stop", async () => {
    const stop = new AbortController();
    let tries = 0;
    const recorded = await recordAfterFailure(
      {
        async finish() {
          if (++tries === 2) stop.abort();
          throw new Error("deadlock detected");
        },
      },
      {
        claim: fakeClaim(1),
        delivered: success,
        signal: stop.signal,
        hooks: {},
        sleep: async () => {},
      },
      new Error("deadlock detected"),
    );
    expect(recorded).toBeNull();
    expect(tries).toBe(2);
  });
});
