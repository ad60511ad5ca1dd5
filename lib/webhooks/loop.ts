import { untilAborted } from "../async/race-abort.ts";
import { ClaimBuffer } from "./claim-buffer.ts";
import {
  type StoreCalls,
  storeCallsOf,
  type Worker,
  type WorkerCollaborators,
  type WorkerCounts,
  type WorkerHooks,
  type WorkerOptions,
  type WorkerPhase,
} from "./loop-contract.ts";
import {
  ALWAYS_AVAILABLE,
  type Availability,
  createOutageGate,
  type OutageGate,
  recordAfterFailure,
} from "./loop-outage.ts";
import { createWakeups, pauseAfterFailure } from "./loop-waits.ts";
import type { Claim, Delivered } from "./model.ts";

export type { Worker, WorkerCollaborators, WorkerCounts, WorkerHooks, WorkerOptions, WorkerPhase };

/**
 * How long free slots wait for more to join them before a claim is made for fewer than a chunk
 * (ClaimBuffer.wantsClaims; without a prefetch only): the claims' own group-commit window.
 */
export const CLAIM_WINDOW_MS = 5;

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
  /** Their ids (with the buffer's, #holding()): this worker's own claims never take them over. */
  readonly #handling = new Set<number>();
  /** Resolved when #running drops to 0. */
  #idleWaiters: Array<() => void> = [];
  /** Requests in flight: what `concurrency` bounds. */
  #busy = 0;
  #accepting = false;
  /** The claim window ended with room below a chunk: the next claim takes what room there is. */
  #shortClaim = false;
  #deliverSignal: AbortSignal = new AbortController().signal;
  /** Whether the last store call of each kind failed: the next that succeeds says so (onStoreBack). */
  readonly #storeFailing: Record<StoreCalls, boolean> = { queue: false, results: false };
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
      claim: (limit) => collaborators.claim(limit, this.#holding()),
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
    if (!this.#buffer.hasRoom()) {
      // Every slot busy: nothing to time yet; look again when a request ends.
      await untilAborted(this.#wakeups.progress(), signal);
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
    this.#storeAnswered("queue");
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

  /**
   * Every delivery this worker holds a claim on: in its buffer (ready, set aside, being renewed),
   * in flight, or with a result on its way. Its own claim never takes these leases over: a claim
   * held in the buffer past its lease would otherwise come back as a second claim on the same
   * delivery, and the first could still be sent (its renewal racing the takeover).
   */
  #holding(): ReadonlySet<number> {
    const held = new Set(this.#handling);
    for (const id of this.#buffer.heldIds()) held.add(id);
    return held;
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
    this.#storeAnswered("results");
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
      this.#storeAnswered("queue");
      this.#hooks.onReleased?.(claims);
    } catch (error) {
      // The leases expire and the deliveries are claimed again.
      this.#storeFailed(error, "release", claims[0]);
    }
  }

  #storeFailed(error: unknown, phase: Exclude<WorkerPhase, "deliver">, claim?: Claim): void {
    this.#storeFailing[storeCallsOf(phase)] = true;
    this.#hooks.onError?.(error, { phase, claim });
  }

  #storeAnswered(calls: StoreCalls): void {
    if (!this.#storeFailing[calls]) return;
    this.#storeFailing[calls] = false;
    this.#hooks.onStoreBack?.(calls);
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
