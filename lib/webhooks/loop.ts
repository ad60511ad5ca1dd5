import { createSendGate, recordThroughOutage } from "./loop-outage.ts";
import { createWakeups, pauseAfterFailure, untilAborted } from "./loop-waits.ts";
import type { Claim, Delivered } from "./model.ts";

/**
 * What the loop needs, and nothing about SQL or HTTP (cf. pg-boss and graphile-worker): the
 * worker process (lib/worker/bind.ts) binds these to a store, the sender and the retry policy.
 */
export interface WorkerCollaborators {
  /** Leases up to `limit` due deliveries. */
  claim(limit: number): Promise<Claim[]>;
  /**
   * Makes the attempt. Throws only when `signal` aborted it (hard shutdown). Null: not sent,
   * because right before the request the claim's lease no longer outlasted it (the process was
   * paused); the claim is given back.
   */
  deliver(claim: Claim, signal: AbortSignal): Promise<Delivered | null>;
  /**
   * Whether a held claim can be sent as it is, now: its lease outlasts the request and its
   * webhook's values were read recently. Absent: always.
   */
  sendable?(claim: Claim): boolean;
  /**
   * Re-checks with the store the claims that were not sendable as held: resolves with those to
   * send now (lease renewed, webhook as it is now); the others must not be sent (given back,
   * or no longer ours). On a rejection none are sent and all are given back (release).
   */
  recheck?(claims: Claim[]): Promise<Claim[]>;
  /** Records the attempt; false when the lease was lost and the result discarded. */
  finish(claim: Claim, delivered: Delivered): Promise<boolean>;
  /** Gives unfinished claims back. */
  release(claims: Claim[]): Promise<void>;
  /** Resolves when work may be due (a change, the next due time) or on abort. */
  waitForWork(signal: AbortSignal): Promise<void>;
  /** Whether a failed store call means the database is unreachable (an outage). */
  isUnreachable?(error: unknown): boolean;
  /** Resolves when the database answers again after an outage, or on abort. */
  untilReachable?(signal: AbortSignal): Promise<void>;
  /** False while the database is known to be unreachable: no request starts then. */
  reachable?(): boolean;
}

/** Observers (logging, metrics). They must not throw. */
export interface WorkerHooks {
  onClaimed?(claims: Claim[]): void;
  onFinished?(claim: Claim, delivered: Delivered, applied: boolean): void;
  onReleased?(claims: Claim[]): void;
  onError?(error: unknown, context: { phase: WorkerPhase; claim?: Claim }): void;
}

/** Where an error happened; all but "deliver" are store calls ("wait": looking for work). */
export type WorkerPhase = "claim" | "recheck" | "deliver" | "finish" | "release" | "wait";

export interface WorkerCounts {
  claimed: number;
  successful: number;
  failed: number;
  /** Attempts that failed and were queued for a retry. */
  retried: number;
  /** Results thrown away because the lease had been lost. */
  discarded: number;
  released: number;
  /** Claims not sent because, checked before their request, they could not be sent any more. */
  withdrawn: number;
}

export interface WorkerOptions {
  concurrency: number;
  /**
   * Claims held ready beyond the requests in flight (default 0 here; the worker command's
   * default is four times the concurrency), so a finished request is replaced at once instead
   * of after the next database write; the buffer is topped up when half empty. They are
   * released unattempted on shutdown; after a crash they come back, like the requests in
   * flight, when their lease expires, each with a `lease_expired` attempt recorded: a claim is
   * the only record that a request may have been made, and telling sent from unsent would take
   * a database write before every request.
   */
  prefetch?: number;
  hooks?: WorkerHooks;
  /**
   * First pause after a failed claim or wait (the database was locked or gone), doubling to
   * 30 s; cut short when the database answers again (untilReachable).
   */
  claimErrorDelayMs?: number;
}

export interface Worker {
  /**
   * Claims and delivers until `signal` aborts, then stops claiming, releases the claims not yet
   * started and waits for the requests in flight; `abortInFlight` aborts those, and their claims
   * are released too.
   */
  run(options: { signal: AbortSignal; abortInFlight?: AbortSignal }): Promise<void>;
  /**
   * Delivers everything due now (retries scheduled later are left), then resolves; `signal`
   * and `abortInFlight` stop it early as they stop run().
   */
  runOnce(options?: { signal?: AbortSignal; abortInFlight?: AbortSignal }): Promise<void>;
  /** Requests in flight. */
  readonly inFlight: number;
  readonly counts: Readonly<WorkerCounts>;
}

/**
 * A delivery worker. At most `concurrency` requests are in flight; up to `prefetch` more claims
 * wait in a buffer, so a slot is refilled the moment its request ends while the claim that tops
 * the buffer up and the finished results share the store's next write.
 */
export function createWorker(collaborators: WorkerCollaborators, options: WorkerOptions): Worker {
  const { concurrency, hooks = {} } = options;
  const capacity = concurrency + (options.prefetch ?? 0);
  // Topped up once half empty: claims then come in chunks of at least half the buffer, and each
  // claim shares its transaction with the results written meanwhile.
  const lowWater = Math.floor((options.prefetch ?? 0) / 2);
  const claimErrorDelayMs = options.claimErrorDelayMs ?? 1000;
  /** Every delivery being handled, until its result is written (shutdown waits for these). */
  const running = new Set<Promise<void>>();
  /** Claimed, not started yet. */
  const ready: Claim[] = [];
  /** Requests in flight: what `concurrency` bounds. */
  let busy = 0;
  let accepting = false;
  let deliverSignal: AbortSignal = new AbortController().signal;
  const counts: WorkerCounts = {
    claimed: 0,
    successful: 0,
    failed: 0,
    retried: 0,
    discarded: 0,
    released: 0,
    withdrawn: 0,
  };
  /** Held claims not sendable as they were, waiting for `recheck`. */
  const stale: Claim[] = [];
  /** Claims in the recheck under way. */
  let rechecking = 0;
  /** Claims just back from a recheck, started at once without asking `sendable` again. */
  const checked = new Set<Claim>();

  const { progress, room, wake, progressUnlessDropped } = createWakeups(() => wantsClaims());

  async function release(claims: Claim[]): Promise<void> {
    if (claims.length === 0) return;
    try {
      await collaborators.release(claims);
      counts.released += claims.length;
      hooks.onReleased?.(claims);
    } catch (error) {
      // The leases expire and the deliveries are claimed again.
      hooks.onError?.(error, { phase: "release", claim: claims[0] });
    }
  }

  /** The request is over: its slot goes to the next ready claim while its result is written. */
  function requestEnded(): void {
    busy--;
    startReady();
    wake();
  }

  // While the database cannot be reached no request starts; the slots fill when it answers.
  const sendGate = createSendGate(collaborators, {
    signal: () => deliverSignal,
    onOpen: () => {
      startReady();
      wake();
    },
  });

  async function handle(claim: Claim, signal: AbortSignal): Promise<void> {
    let delivered: Delivered | null;
    try {
      delivered = await collaborators.deliver(claim, signal);
    } catch (error) {
      requestEnded();
      if (signal.aborted) return release([claim]);
      // Not released on purpose: the lease runs out and the delivery is retried after it,
      // instead of a tight loop over a delivery that makes the sender throw.
      hooks.onError?.(error, { phase: "deliver", claim });
      return;
    }
    requestEnded();
    if (delivered === null) {
      counts.withdrawn++;
      return release([claim]);
    }
    const applied = await recordThroughOutage(collaborators, { claim, delivered, signal, hooks });
    if (applied === null) return;
    if (!applied) counts.discarded++;
    else if (delivered.outcome.state === "successful") counts.successful++;
    else if (delivered.outcome.state === "failed") counts.failed++;
    else counts.retried++;
    hooks.onFinished?.(claim, delivered, applied);
  }

  function startReady(): void {
    while (accepting && busy < concurrency && ready.length > 0 && !sendGate.closed()) {
      const claim = ready.shift() as Claim;
      if (checked.has(claim)) checked.delete(claim);
      else if (collaborators.sendable && !collaborators.sendable(claim)) {
        // The buffer is first in, first out: when its head needs a recheck, the claims taken
        // with it soon will too. All go in one recheck now, long before their leases run out.
        stale.push(claim);
        moveStale(collaborators.sendable);
        continue;
      }
      busy++;
      const task: Promise<void> = handle(claim, deliverSignal).finally(() => {
        running.delete(task);
        wake();
      });
      running.add(task);
    }
    checked.clear();
    if (accepting && stale.length > 0 && rechecking === 0) recheckStale();
  }

  /** Moves the ready claims that cannot be sent as they are to `stale`, keeping the order. */
  function moveStale(sendable: (claim: Claim) => boolean): void {
    let kept = 0;
    for (const claim of ready) {
      if (checked.has(claim) || sendable(claim)) ready[kept++] = claim;
      else stale.push(claim);
    }
    ready.length = kept;
  }

  /** One recheck at a time; claims found stale meanwhile wait for the next. */
  function recheckStale(): void {
    const batch = stale.splice(0);
    rechecking = batch.length;
    const task: Promise<void> = (async () => {
      try {
        const keep = (await collaborators.recheck?.(batch)) ?? batch;
        counts.withdrawn += batch.length - keep.length;
        // Those that can start now do so as rechecked; the others are judged again when their
        // turn comes (renewed again if need be), so a wait in the buffer never outlives a lease.
        for (const claim of keep.slice(0, Math.max(0, concurrency - busy))) checked.add(claim);
        ready.unshift(...keep);
        startReady();
      } catch (error) {
        hooks.onError?.(error, { phase: "recheck", claim: batch[0] });
        // Given back, not left to their leases: a passing failure (a deadlock, a dropped
        // connection) would otherwise hold them a whole lease. If the store is down, the
        // release fails too and the leases run out as before.
        await release(batch);
      }
    })().finally(() => {
      rechecking = 0;
      running.delete(task);
      startReady();
      wake();
    });
    running.add(task);
  }

  /** Claims held and not in flight: ready, stale, or being rechecked. */
  function waiting(): number {
    return ready.length + stale.length + rechecking;
  }

  function wantsClaims(): boolean {
    return busy + waiting() < capacity && waiting() <= lowWater;
  }

  /** Tops the buffer up; returns whether the queue had as many due as there was room for. */
  async function topUp(): Promise<boolean> {
    if (!wantsClaims()) return true;
    const room = capacity - busy - waiting();
    const claims = await collaborators.claim(room);
    if (claims.length > 0) {
      counts.claimed += claims.length;
      hooks.onClaimed?.(claims);
      ready.push(...claims);
      startReady();
    }
    return claims.length === room;
  }

  function begin(runOptions: { abortInFlight?: AbortSignal }): void {
    accepting = true;
    deliverSignal = runOptions.abortInFlight ?? new AbortController().signal;
  }

  /** Stops starting requests, gives back the claims never started, waits for the rest. */
  async function end(): Promise<void> {
    accepting = false;
    await release([...ready.splice(0), ...stale.splice(0)]);
    while (running.size > 0) await Promise.all(running);
    // Claims a recheck returned while the requests in flight ended.
    checked.clear();
    await release(ready.splice(0));
  }

  /** After a failed store call on the idle path. */
  function pauseAfter(error: unknown, failures: number, signal: AbortSignal): Promise<void> {
    const baseDelayMs = claimErrorDelayMs;
    return pauseAfterFailure({ error, failures, baseDelayMs, signal, store: collaborators });
  }

  /** Sleeps until new work, its due time, or progress; a failed look is returned, not thrown. */
  async function idle(signal: AbortSignal): Promise<unknown> {
    const wait = new AbortController();
    const stop = () => wait.abort();
    signal.addEventListener("abort", stop, { once: true });
    // Settled either way, so a look that fails after progress() won the race is still handled.
    const looked = collaborators.waitForWork(wait.signal).then(
      () => null,
      (error: unknown) => error ?? new Error("waitForWork failed"),
    );
    const progressed = progressUnlessDropped();
    const result = await Promise.race([looked, progressed.promise.then(() => null)]);
    // Dropped when the look won: an idle worker would gather one per look otherwise.
    progressed.drop();
    signal.removeEventListener("abort", stop);
    wait.abort();
    return result;
  }

  async function run(runOptions: { signal: AbortSignal; abortInFlight?: AbortSignal }) {
    const { signal } = runOptions;
    begin(runOptions);
    // Store calls failed in a row on the idle path (claim, or looking for the next due time).
    let storeErrors = 0;
    while (!signal.aborted) {
      let more: boolean;
      try {
        more = await topUp();
        storeErrors = 0;
      } catch (error) {
        hooks.onError?.(error, { phase: "claim" });
        await pauseAfter(error, storeErrors++, signal);
        continue;
      }
      if (signal.aborted) break;
      if (more) {
        // Full: wait for room (a request ending).
        if (!wantsClaims()) await untilAborted(room(), signal);
        continue;
      }
      // Fewer due than room: sleep until new work, its due time, or progress (a finished
      // delivery may have been rescheduled).
      const failed = await idle(signal);
      if (failed !== null && !signal.aborted) {
        hooks.onError?.(failed, { phase: "wait" });
        await pauseAfter(failed, storeErrors++, signal);
      }
    }
    await end();
  }

  async function runOnce(
    runOptions: { signal?: AbortSignal; abortInFlight?: AbortSignal } = {},
  ): Promise<void> {
    const signal = runOptions.signal ?? new AbortController().signal;
    begin(runOptions);
    try {
      while (!signal.aborted) {
        const more = await topUp();
        if (more) {
          if (!wantsClaims()) await untilAborted(room(), signal);
          continue;
        }
        if (busy === 0 && waiting() === 0) {
          // Nothing more was due: wait for the results being written, then look once more (a
          // result written meanwhile may not have been visible to the claim).
          if (running.size === 0) break;
          await Promise.all(running);
          continue;
        }
        await untilAborted(progress(), signal);
      }
    } finally {
      await end();
    }
  }

  return {
    run,
    runOnce,
    get inFlight() {
      return busy;
    },
    counts,
  };
}
