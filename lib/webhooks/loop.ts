import { untilAborted } from "../async/race-abort.ts";
import { ClaimBuffer } from "./claim-buffer.ts";
import type { Freshness } from "./lease-rules.ts";
import {
  ALWAYS_AVAILABLE,
  type Availability,
  createOutageGate,
  type OutageGate,
  recordAfterFailure,
} from "./loop-outage.ts";
import { createWakeups, pauseAfterFailure } from "./loop-waits.ts";
import type { Claim, Delivered } from "./model.ts";

/**
 * How long free slots wait for more to join them before a claim is made for fewer than a chunk
 * (ClaimBuffer.wantsClaims; without a prefetch only): the claims' own group-commit window.
 */
export const CLAIM_WINDOW_MS = 5;

/**
 * What the loop needs, and nothing about SQL or HTTP (cf. pg-boss's fetch/onFetch/onError): the
 * worker process (lib/worker/bind.ts) binds these to a store and the sender.
 */
export interface WorkerCollaborators {
  /**
   * Leases up to `limit` due deliveries; not those in `holding` (deliveries this worker still
   * handles, whose leases may have run out while their results are on their way).
   */
  claim(limit: number, holding: ReadonlySet<number>): Promise<Claim[]>;
  /**
   * Renews held claims that may not be sent as held (Freshness): resolves with those to send
   * now (lease renewed, webhook as it is now); the others must not be sent (given back, or no
   * longer ours). On a rejection none are sent and all are given back (release).
   */
  renew(claims: Claim[]): Promise<Claim[]>;
  /**
   * Makes the attempt and judges it. Throws only when `signal` aborted it (hard shutdown). Null:
   * not sent, because right before the request the claim's lease no longer outlasted it (the
   * process was paused); the claim is given back.
   */
  send(claim: Claim, signal: AbortSignal): Promise<Delivered | null>;
  /** Records the attempt; false when the lease was lost and the result discarded. */
  finish(claim: Claim, delivered: Delivered): Promise<boolean>;
  /** Gives unfinished claims back. */
  release(claims: Claim[]): Promise<void>;
  /** Resolves when work may be due (a change, the next due time) or on abort. */
  waitForWork(signal: AbortSignal): Promise<void>;
  /** Whether the database answers. Absent: always. */
  availability?: Availability;
}

/** Observers (logging, metrics). They must not throw. */
export interface WorkerHooks {
  onClaimed?(claims: Claim[]): void;
  onFinished?(claim: Claim, delivered: Delivered, applied: boolean): void;
  onReleased?(claims: Claim[]): void;
  onError?(error: unknown, context: { phase: WorkerPhase; claim?: Claim }): void;
  /** A store call succeeded after one or more failed (the end of an outage or a full disk). */
  onStoreBack?(): void;
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
  /** When a held claim may start as it is (lease-rules.ts). Absent: always. */
  freshness?: Freshness;
  hooks?: WorkerHooks;
  /**
   * The longest pause between tries to write a result that failed for another reason than an
   * outage (default 5 s; the worker passes a quarter of its lease, so the owner's write comes
   * within the grace other workers give it).
   */
  resultRetryMaxMs?: number;
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
 * A delivery worker: `concurrency` slots, each doing take → send → record, fed by a claim
 * buffer (claim-buffer.ts) that holds up to `prefetch` more claims, so a slot is refilled the
 * moment its request ends while the claim that tops the buffer up and the finished results
 * share the store's next write.
 */
export function createWorker(collaborators: WorkerCollaborators, options: WorkerOptions): Worker {
  return new DeliveryLoop(collaborators, options);
}

class DeliveryLoop implements Worker {
  readonly counts: WorkerCounts = {
    claimed: 0,
    successful: 0,
    failed: 0,
    retried: 0,
    discarded: 0,
    released: 0,
    withdrawn: 0,
  };
  readonly #collaborators: WorkerCollaborators;
  readonly #availability: Availability;
  readonly #hooks: WorkerHooks;
  readonly #concurrency: number;
  readonly #claimErrorDelayMs: number;
  readonly #resultRetryMaxMs: number | undefined;
  readonly #gate: OutageGate;
  readonly #buffer: ClaimBuffer;
  readonly #wakeups: ReturnType<typeof createWakeups>;
  /** Deliveries being handled, until their result is written (shutdown waits for these). */
  #running = 0;
  /** Their ids: this worker's own claims never take their leases over. */
  readonly #handling = new Set<number>();
  /** Resolved when #running drops to 0. */
  #idleWaiters: Array<() => void> = [];
  /** Requests in flight: what `concurrency` bounds. */
  #busy = 0;
  #accepting = false;
  /** The claim window ended with room below a chunk: the next claim takes what room there is. */
  #shortClaim = false;
  #deliverSignal: AbortSignal = new AbortController().signal;
  /** Whether the last store call failed: the next that succeeds says so (onStoreBack). */
  #storeFailing = false;
  /** What writing a result needs, built once. */
  readonly #recording: Parameters<typeof recordAfterFailure<Delivered>>[0];
  readonly #finishHooks = {
    onError: (error: unknown, context: { claim: Claim }) =>
      this.#storeFailed(error, "finish", context.claim),
  };

  constructor(collaborators: WorkerCollaborators, options: WorkerOptions) {
    this.#collaborators = collaborators;
    this.#availability = collaborators.availability ?? ALWAYS_AVAILABLE;
    this.#hooks = options.hooks ?? {};
    this.#concurrency = options.concurrency;
    this.#claimErrorDelayMs = options.claimErrorDelayMs ?? 1000;
    this.#resultRetryMaxMs = options.resultRetryMaxMs;
    this.#gate = createOutageGate(this.#availability);
    const availability = this.#availability;
    this.#recording = {
      finish: (claim, delivered) => collaborators.finish(claim, delivered),
      isUnreachable: (error) => availability.isUnreachable(error),
      untilReachable: (signal) => availability.untilReachable(signal),
    };
    this.#buffer = new ClaimBuffer({
      concurrency: options.concurrency,
      prefetch: options.prefetch ?? 0,
      inFlight: () => this.#busy,
      claim: (limit) => collaborators.claim(limit, this.#handling),
      renew: (claims) => collaborators.renew(claims),
      release: (claims) => this.#release(claims),
      freshness: options.freshness,
      gate: this.#gate,
      onReady: () => {
        this.#fill();
        this.#wakeups.wake();
      },
      onClaimed: (claims) => {
        this.counts.claimed += claims.length;
        this.#hooks.onClaimed?.(claims);
      },
      onWithdrawn: (count) => {
        this.counts.withdrawn += count;
      },
      onRenewError: (error, claims) => this.#storeFailed(error, "recheck", claims[0]),
    });
    this.#wakeups = createWakeups(() => this.#buffer.wantsClaims());
  }

  get inFlight(): number {
    return this.#busy;
  }

  async run(runOptions: { signal: AbortSignal; abortInFlight?: AbortSignal }): Promise<void> {
    const { signal } = runOptions;
    this.#begin(runOptions);
    // Store calls failed in a row on the idle path (claim, or looking for the next due time).
    let storeErrors = 0;
    while (!signal.aborted) {
      let more: boolean;
      try {
        more = await this.#topUp();
        storeErrors = 0;
      } catch (error) {
        this.#storeFailed(error, "claim");
        await this.#pauseAfter(error, storeErrors++, signal);
        continue;
      }
      if (signal.aborted) break;
      if (more) {
        // Full: wait for room (requests ending).
        await this.#untilRoom(signal);
        continue;
      }
      // Fewer due than room: sleep until new work, its due time, or progress (a finished
      // delivery may have been rescheduled).
      const failed = await this.#idle(signal);
      if (failed !== null && !signal.aborted) {
        this.#storeFailed(failed, "wait");
        await this.#pauseAfter(failed, storeErrors++, signal);
      }
    }
    await this.#end();
  }

  async runOnce(runOptions: { signal?: AbortSignal; abortInFlight?: AbortSignal } = {}) {
    const signal = runOptions.signal ?? new AbortController().signal;
    this.#begin(runOptions);
    try {
      while (!signal.aborted) {
        const more = await this.#topUp();
        if (more) {
          await this.#untilRoom(signal);
          continue;
        }
        if (this.#busy === 0 && this.#buffer.held === 0) {
          // Nothing more was due: wait for the results being written, then look once more (a
          // result written meanwhile may not have been visible to the claim).
          if (this.#running === 0) break;
          await this.#allHandled();
          continue;
        }
        await untilAborted(this.#wakeups.progress(), signal);
      }
    } finally {
      await this.#end();
    }
  }

  #begin(runOptions: { abortInFlight?: AbortSignal }): void {
    this.#accepting = true;
    this.#deliverSignal = runOptions.abortInFlight ?? new AbortController().signal;
    this.#buffer.start();
  }

  /** Stops starting requests, gives back the claims never started, waits for the rest. */
  async #end(): Promise<void> {
    this.#accepting = false;
    const drained = this.#buffer.drain();
    while (this.#running > 0) await this.#allHandled();
    await drained;
  }

  /**
   * Waits until the buffer wants claims. When it claims in chunks (no prefetch), a few free slots
   * are also claimed for once they have stood free CLAIM_WINDOW_MS: slow requests holding the
   * other slots must not keep new work waiting for them.
   */
  async #untilRoom(signal: AbortSignal): Promise<void> {
    if (this.#buffer.wantsClaims()) return;
    if (!this.#buffer.claimsInChunks) {
      await untilAborted(this.#wakeups.room(), signal);
      return;
    }
    const room = this.#wakeups.roomUnlessDropped();
    let timer: ReturnType<typeof setTimeout> | undefined;
    let windowEnded = false;
    const window = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        windowEnded = true;
        resolve();
      }, CLAIM_WINDOW_MS);
    });
    await untilAborted(Promise.race([room.promise, window]), signal);
    clearTimeout(timer);
    room.drop();
    this.#shortClaim = windowEnded && !this.#buffer.wantsClaims();
  }

  /** Tops the buffer up and starts what it can; a claim's failure is thrown. */
  async #topUp(): Promise<boolean> {
    const short = this.#shortClaim;
    this.#shortClaim = false;
    const more = await this.#buffer.topUp(short);
    this.#storeAnswered();
    this.#fill();
    return more;
  }

  /** Starts a request in every free slot the buffer has a claim for. */
  #fill(): void {
    if (!this.#accepting) return;
    for (const claim of this.#buffer.take(this.#concurrency - this.#busy)) {
      const id = claim.delivery.id;
      this.#busy++;
      this.#running++;
      this.#handling.add(id);
      void this.#handle(claim, this.#deliverSignal);
    }
  }

  /** A delivery's turn is over (its result written, or given up). */
  #handled(id: number): void {
    this.#handling.delete(id);
    if (--this.#running === 0) {
      const waiters = this.#idleWaiters;
      this.#idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
    this.#wakeups.wake();
  }

  /** Resolves once no delivery is being handled. */
  #allHandled(): Promise<void> {
    if (this.#running === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** One slot's turn: send, then record; never rejects. */
  async #handle(claim: Claim, signal: AbortSignal): Promise<void> {
    try {
      await this.#sendAndRecord(claim, signal);
    } finally {
      this.#handled(claim.delivery.id);
    }
  }

  async #sendAndRecord(claim: Claim, signal: AbortSignal): Promise<void> {
    let delivered: Delivered | null;
    try {
      delivered = await this.#collaborators.send(claim, signal);
    } catch (error) {
      this.#requestEnded();
      if (signal.aborted) return this.#release([claim]);
      // Not released on purpose: the lease runs out and the delivery is retried after it,
      // instead of a tight loop over a delivery that makes the sender throw.
      this.#hooks.onError?.(error, { phase: "deliver", claim });
      return;
    }
    this.#requestEnded();
    if (delivered === null) {
      this.counts.withdrawn++;
      return this.#release([claim]);
    }
    let applied: boolean | null;
    try {
      // The usual case: written with the next group commit, nothing else to wait for.
      applied = await this.#collaborators.finish(claim, delivered);
    } catch (error) {
      applied = await recordAfterFailure(
        this.#recording,
        {
          claim,
          delivered,
          signal,
          gate: this.#gate,
          hooks: this.#finishHooks,
          maxDelayMs: this.#resultRetryMaxMs,
        },
        error,
      );
    }
    if (applied === null) return;
    this.#storeAnswered();
    if (!applied) this.counts.discarded++;
    else if (delivered.outcome.state === "successful") this.counts.successful++;
    else if (delivered.outcome.state === "failed") this.counts.failed++;
    else this.counts.retried++;
    this.#hooks.onFinished?.(claim, delivered, applied);
  }

  /** The request is over: its slot goes to the next claim while its result is written. */
  #requestEnded(): void {
    this.#busy--;
    this.#fill();
    this.#wakeups.wake();
  }

  async #release(claims: Claim[]): Promise<void> {
    if (claims.length === 0) return;
    try {
      await this.#collaborators.release(claims);
      this.counts.released += claims.length;
      this.#storeAnswered();
      this.#hooks.onReleased?.(claims);
    } catch (error) {
      // The leases expire and the deliveries are claimed again.
      this.#storeFailed(error, "release", claims[0]);
    }
  }

  #storeFailed(error: unknown, phase: WorkerPhase, claim?: Claim): void {
    this.#storeFailing = true;
    this.#hooks.onError?.(error, { phase, claim });
  }

  #storeAnswered(): void {
    if (!this.#storeFailing) return;
    this.#storeFailing = false;
    this.#hooks.onStoreBack?.();
  }

  /** After a failed store call on the idle path. */
  #pauseAfter(error: unknown, failures: number, signal: AbortSignal): Promise<void> {
    const baseDelayMs = this.#claimErrorDelayMs;
    return pauseAfterFailure({ error, failures, baseDelayMs, signal, store: this.#availability });
  }

  /** Sleeps until new work, its due time, or progress; a failed look is returned, not thrown. */
  async #idle(signal: AbortSignal): Promise<unknown> {
    const wait = new AbortController();
    const stop = () => wait.abort();
    signal.addEventListener("abort", stop, { once: true });
    // Settled either way, so a look that fails after progress() won the race is still handled.
    const looked = this.#collaborators.waitForWork(wait.signal).then(
      () => null,
      (error: unknown) => error ?? new Error("waitForWork failed"),
    );
    const progressed = this.#wakeups.progressUnlessDropped();
    const result = await Promise.race([looked, progressed.promise.then(() => null)]);
    // Dropped when the look won: an idle worker would gather one per look otherwise.
    progressed.drop();
    signal.removeEventListener("abort", stop);
    wait.abort();
    return result;
  }
}
