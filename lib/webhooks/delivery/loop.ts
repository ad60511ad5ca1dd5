import type { Claim, Delivered } from "../model.ts";
import { ClaimFeed, type ClaimHandle } from "./claim-feed.ts";
import {
  noCounts,
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
  createOutageGate,
  type OutageGate,
  recordAfterFailure,
} from "./loop-outage.ts";

export { CLAIM_WINDOW_MS } from "./claim-feed.ts";
export type { Worker, WorkerCollaborators, WorkerCounts, WorkerHooks, WorkerOptions, WorkerPhase };

/**
 * A delivery worker: `concurrency` slots, each doing take → send → record. What to take, and
 * when to claim, renew and give back, is the claim feed's business (claim-feed.ts): a slot
 * asks it for the next claim the moment its request ends, while its result is written with the
 * store's next group commit.
 */
export function createWorker(collaborators: WorkerCollaborators, options: WorkerOptions): Worker {
  return new DeliveryLoop(collaborators, options);
}

class DeliveryLoop implements Worker {
  readonly counts: WorkerCounts = noCounts();
  readonly #collaborators: WorkerCollaborators;
  readonly #hooks: WorkerHooks;
  readonly #concurrency: number;
  readonly #resultRetryMaxMs: number | undefined;
  readonly #gate: OutageGate;
  readonly #feed: ClaimFeed;
  /** Whether the last store call of each kind failed: the next that succeeds says so (onStoreBack). */
  readonly #storeFailing: Record<StoreCalls, boolean> = { queue: false, results: false };
  /** What writing a result after a failure needs, built once. */
  readonly #recording: Parameters<typeof recordAfterFailure<Delivered>>[0];
  readonly #finishHooks = {
    onError: (error: unknown, context: { claim: Claim }) =>
      this.#storeFailed(error, "finish", context.claim),
  };

  constructor(collaborators: WorkerCollaborators, options: WorkerOptions) {
    this.#collaborators = collaborators;
    const availability = collaborators.availability ?? ALWAYS_AVAILABLE;
    this.#hooks = options.hooks ?? {};
    this.#concurrency = options.concurrency;
    this.#resultRetryMaxMs = options.resultRetryMaxMs;
    this.#gate = createOutageGate(availability);
    this.#recording = {
      finish: (claim, delivered) => collaborators.finish(claim, delivered),
      isUnreachable: (error) => availability.isUnreachable(error),
      untilReachable: (signal) => availability.untilReachable(signal),
    };
    this.#feed = new ClaimFeed({
      concurrency: options.concurrency,
      prefetch: options.prefetch ?? 0,
      claim: (limit, holding) => collaborators.claim(limit, holding),
      renew: (claims) => collaborators.renew(claims),
      release: (claims) => this.#release(claims),
      waitForWork: (signal) => collaborators.waitForWork(signal),
      availability,
      gate: this.#gate,
      freshness: options.freshness,
      claimErrorDelayMs: options.claimErrorDelayMs ?? 1000,
      onClaimed: (claims) => {
        this.counts.claimed += claims.length;
        this.#hooks.onClaimed?.(claims);
      },
      onWithdrawn: (count) => {
        this.counts.withdrawn += count;
      },
      onStoreError: (error, phase, claim) => this.#storeFailed(error, phase, claim),
      onClaimAnswered: () => this.#storeAnswered("queue"),
    });
  }

  get inFlight(): number {
    return this.#feed.inFlight;
  }

  async run(runOptions: { signal: AbortSignal; abortInFlight?: AbortSignal }): Promise<void> {
    const { signal } = runOptions;
    // The feed opens first (synchronously): a slot asking a closed feed stops at once.
    const feeding = this.#feed.run({ signal });
    const slots = this.#startSlots(signal, runOptions.abortInFlight);
    await feeding;
    await slots;
  }

  async runOnce(runOptions: { signal?: AbortSignal; abortInFlight?: AbortSignal } = {}) {
    const signal = runOptions.signal ?? new AbortController().signal;
    const feeding = this.#feed.run({ signal, once: true });
    const slots = this.#startSlots(signal, runOptions.abortInFlight);
    try {
      await feeding;
    } finally {
      await slots;
    }
  }

  /** The slots, each taking its next claim from the feed until it stops. */
  #startSlots(signal: AbortSignal, abortInFlight = new AbortController().signal) {
    const slots = Array.from({ length: this.#concurrency }, () =>
      this.#slot(signal, abortInFlight),
    );
    return Promise.all(slots);
  }

  async #slot(signal: AbortSignal, abortInFlight: AbortSignal): Promise<void> {
    for (;;) {
      const handle = await this.#feed.next(signal);
      if (handle === null) return;
      const { claim } = handle;
      let delivered: Delivered | null;
      try {
        delivered = await this.#collaborators.send(claim, abortInFlight);
      } catch (error) {
        handle.requestEnded();
        if (abortInFlight.aborted) void this.#giveBack(handle);
        else {
          // Not released on purpose: the lease runs out and the delivery is retried after it,
          // instead of a tight loop over a delivery that makes the sender throw.
          this.#hooks.onError?.(error, { phase: "deliver", claim });
          handle.handled();
        }
        continue;
      }
      handle.requestEnded();
      if (delivered === null) {
        this.counts.withdrawn++;
        void this.#giveBack(handle);
      } else void this.#record(handle, delivered, abortInFlight);
    }
  }

  /** Writes a result (with the next group commit, usually), then ends the claim; never rejects. */
  async #record(handle: ClaimHandle, delivered: Delivered, signal: AbortSignal): Promise<void> {
    const { claim } = handle;
    let applied: boolean | null;
    try {
      try {
        applied = await this.#collaborators.finish(claim, delivered);
      } catch (error) {
        const maxDelayMs = this.#resultRetryMaxMs;
        const hooks = this.#finishHooks;
        const options = { claim, delivered, signal, gate: this.#gate, hooks, maxDelayMs };
        applied = await recordAfterFailure(this.#recording, options, error);
      }
      if (applied === null) return void this.counts.abandoned++;
      this.#storeAnswered("results");
      if (!applied) this.counts.discarded++;
      else if (delivered.outcome.state === "successful") this.counts.successful++;
      else if (delivered.outcome.state === "failed") this.counts.failed++;
      else this.counts.retried++;
      this.#hooks.onFinished?.(claim, delivered, applied);
    } finally {
      handle.handled();
    }
  }

  /** Gives a claim handed out back unsent (withdrawn, or aborted), then ends it. */
  async #giveBack(handle: ClaimHandle): Promise<void> {
    try {
      await this.#release([handle.claim]);
    } finally {
      handle.handled();
    }
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
}
