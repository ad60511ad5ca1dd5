import type { AttemptRecord, Claim, Outcome } from "./types.ts";

/** One attempt's result and the state it leads to. */
export interface Delivered {
  record: AttemptRecord;
  outcome: Outcome;
}

/**
 * What the loop needs, and nothing about SQL or HTTP (cf. pg-boss and graphile-worker): the
 * composition in deliveries.ts binds these to a store, the sender and the retry policy.
 */
export interface WorkerCollaborators {
  /** Leases up to `limit` due deliveries. */
  claim(limit: number): Promise<Claim[]>;
  /** Makes the attempt. Throws only when `signal` aborted it (hard shutdown). */
  deliver(claim: Claim, signal: AbortSignal): Promise<Delivered>;
  /** Records the attempt; false when the lease was lost and the result discarded. */
  finish(claim: Claim, delivered: Delivered): Promise<boolean>;
  /** Gives unfinished claims back. */
  release(claims: Claim[]): Promise<void>;
  /** Resolves when work may be due (a change, the next due time) or on abort. */
  waitForWork(signal: AbortSignal): Promise<void>;
}

/** Observers (logging now; metrics and heartbeats later). They must not throw. */
export interface WorkerHooks {
  onClaimed?(claims: Claim[]): void;
  onFinished?(claim: Claim, delivered: Delivered, applied: boolean): void;
  onReleased?(claims: Claim[]): void;
  onError?(error: unknown, context: { phase: WorkerPhase; claim?: Claim }): void;
}

export type WorkerPhase = "claim" | "deliver" | "finish" | "release";

export interface WorkerCounts {
  claimed: number;
  successful: number;
  failed: number;
  /** Attempts that failed and were queued for a retry. */
  retried: number;
  /** Results thrown away because the lease had been lost. */
  discarded: number;
  released: number;
}

export interface WorkerOptions {
  concurrency: number;
  hooks?: WorkerHooks;
  /** First pause after a failed claim (the database was locked or gone), doubling to 30 s. */
  claimErrorDelayMs?: number;
}

export interface Worker {
  /**
   * Claims and delivers until `signal` aborts, then stops claiming and waits for what is in
   * flight; `abortInFlight` aborts those requests, and their claims are released.
   */
  run(options: { signal: AbortSignal; abortInFlight?: AbortSignal }): Promise<void>;
  /**
   * Delivers everything due now (retries scheduled later are left), then resolves; `signal`
   * and `abortInFlight` stop it early as they stop run().
   */
  runOnce(options?: { signal?: AbortSignal; abortInFlight?: AbortSignal }): Promise<void>;
  readonly inFlight: number;
  readonly counts: Readonly<WorkerCounts>;
}

/** A delivery worker: bounded concurrency, claims in batches of free slots. */
export function createWorker(collaborators: WorkerCollaborators, options: WorkerOptions): Worker {
  const { concurrency, hooks = {} } = options;
  const claimErrorDelayMs = options.claimErrorDelayMs ?? 1000;
  const running = new Set<Promise<void>>();
  let slotWaiters: Array<() => void> = [];
  const counts: WorkerCounts = {
    claimed: 0,
    successful: 0,
    failed: 0,
    retried: 0,
    discarded: 0,
    released: 0,
  };

  function slotFreed(): Promise<void> {
    return new Promise((resolve) => slotWaiters.push(resolve));
  }

  async function release(claims: Claim[]): Promise<void> {
    try {
      await collaborators.release(claims);
      counts.released += claims.length;
      hooks.onReleased?.(claims);
    } catch (error) {
      // The leases expire and the deliveries are claimed again.
      hooks.onError?.(error, { phase: "release", claim: claims[0] });
    }
  }

  async function handle(claim: Claim, signal: AbortSignal): Promise<void> {
    let delivered: Delivered;
    try {
      delivered = await collaborators.deliver(claim, signal);
    } catch (error) {
      if (signal.aborted) return release([claim]);
      // Not released on purpose: the lease runs out and the delivery is retried after it,
      // instead of a tight loop over a delivery that makes the sender throw.
      hooks.onError?.(error, { phase: "deliver", claim });
      return;
    }
    try {
      const applied = await collaborators.finish(claim, delivered);
      if (!applied) counts.discarded++;
      else if (delivered.outcome.state === "successful") counts.successful++;
      else if (delivered.outcome.state === "failed") counts.failed++;
      else counts.retried++;
      hooks.onFinished?.(claim, delivered, applied);
    } catch (error) {
      hooks.onError?.(error, { phase: "finish", claim });
    }
  }

  function start(claim: Claim, signal: AbortSignal): void {
    const task: Promise<void> = handle(claim, signal).finally(() => {
      running.delete(task);
      const waiters = slotWaiters;
      slotWaiters = [];
      for (const wake of waiters) wake();
    });
    running.add(task);
  }

  /** Claims into the free slots; returns whether every free slot was filled. */
  async function fill(signal: AbortSignal): Promise<boolean> {
    const free = concurrency - running.size;
    if (free <= 0) return true;
    const claims = await collaborators.claim(free);
    if (claims.length > 0) {
      counts.claimed += claims.length;
      hooks.onClaimed?.(claims);
      for (const claim of claims) start(claim, signal);
    }
    return claims.length === free;
  }

  async function run(runOptions: { signal: AbortSignal; abortInFlight?: AbortSignal }) {
    const { signal } = runOptions;
    const deliverSignal = runOptions.abortInFlight ?? new AbortController().signal;
    let claimErrors = 0;
    while (!signal.aborted) {
      let full: boolean;
      try {
        full = await fill(deliverSignal);
        claimErrors = 0;
      } catch (error) {
        hooks.onError?.(error, { phase: "claim" });
        const delay = Math.min(30_000, claimErrorDelayMs * 2 ** claimErrors++);
        await abortableDelay(delay, signal);
        continue;
      }
      if (signal.aborted) break;
      if (running.size >= concurrency) {
        await untilAborted(slotFreed(), signal);
      } else if (!full) {
        // Fewer due than free slots: sleep until new work, its due time, or a slot frees (a
        // finished delivery may have been rescheduled).
        const wait = new AbortController();
        const stop = () => wait.abort();
        signal.addEventListener("abort", stop, { once: true });
        await Promise.race([collaborators.waitForWork(wait.signal), slotFreed()]);
        signal.removeEventListener("abort", stop);
        wait.abort();
      }
    }
    while (running.size > 0) await Promise.all(running);
  }

  async function runOnce(
    runOptions: { signal?: AbortSignal; abortInFlight?: AbortSignal } = {},
  ): Promise<void> {
    const signal = runOptions.signal ?? new AbortController().signal;
    const deliverSignal = runOptions.abortInFlight ?? new AbortController().signal;
    while (!signal.aborted) {
      await fill(deliverSignal);
      if (running.size === 0) return;
      await untilAborted(slotFreed(), signal);
    }
    while (running.size > 0) await Promise.all(running);
  }

  return {
    run,
    runOnce,
    get inFlight() {
      return running.size;
    },
    counts,
  };
}

function untilAborted(promise: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      signal.removeEventListener("abort", done);
      resolve();
    };
    signal.addEventListener("abort", done, { once: true });
    promise.then(done);
  });
}

function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
