import { untilAborted } from "../../async/race-abort.ts";
import type { Claim } from "../model.ts";
import { ClaimBuffer } from "./claim-buffer.ts";
import { type ClaimRoomRule, claimRoom, claimRoomRule } from "./claim-room.ts";
import type { Freshness } from "./lease-rules.ts";
import type { Availability, OutageGate } from "./loop-outage.ts";
import { createWakeups, pauseAfterFailure } from "./loop-waits.ts";

/**
 * How long free slots wait for more to join them before a claim is made for fewer than a chunk
 * (ClaimRoomRule.minClaim; without a prefetch only): the claims' own group-commit window.
 */
export const CLAIM_WINDOW_MS = 5;

/** Where the feed's store calls failed: claiming, renewing, or looking for work. */
export type FeedPhase = "claim" | "recheck" | "wait";

export interface ClaimFeedOptions {
  concurrency: number;
  /** Claims held ready beyond the requests in flight (WorkerOptions.prefetch). */
  prefetch: number;
  /** Leases due deliveries, never those in `holding` (the feed's own). */
  claim(limit: number, holding: ReadonlySet<number>): Promise<Claim[]>;
  renew(claims: Claim[]): Promise<Claim[]>;
  /** Gives claims back; never throws (the loop counts and reports). */
  release(claims: Claim[]): Promise<void>;
  waitForWork(signal: AbortSignal): Promise<void>;
  availability: Availability;
  gate: OutageGate;
  freshness?: Freshness;
  /** First pause after a failed claim or look for work, doubling to 30 s. */
  claimErrorDelayMs: number;
  onClaimed(claims: Claim[]): void;
  onWithdrawn(count: number): void;
  onStoreError(error: unknown, phase: FeedPhase, claim?: Claim): void;
  /** A claim succeeded (the loop ends a run of failed queue calls). */
  onClaimAnswered(): void;
}

/**
 * A claim handed out, with the ends its slot must call, once each and in this order (the claim
 * ledger asserts both): `requestEnded()` when its request is over (the slot is free while the
 * result is written), then `handled()` when the claim is over (its result written, or it given
 * back): until then its delivery is never claimed again by this worker.
 */
export interface ClaimHandle {
  readonly claim: Claim;
  requestEnded(): void;
  handled(): void;
}

/**
 * The one owner of claiming (after graphile-worker's LocalQueue): slots ask it for their next
 * claim with `next(signal)`, and it decides everything else: when and how much to claim (the
 * buffer's low-water mark, the claim window), the waits when nothing is due and the pauses after
 * a failed store call, renewals of claims held too long (ClaimBuffer), and giving back what it
 * holds when it stops. What it hands out is a ClaimHandle, whose two ends the slot calls.
 */
export class ClaimFeed {
  readonly #options: ClaimFeedOptions;
  readonly #buffer: ClaimBuffer;
  readonly #rule: ClaimRoomRule;
  readonly #wakeups: ReturnType<typeof createWakeups>;
  /** Slots waiting for a claim, first come first served. */
  #waiting: Array<(handle: ClaimHandle | null) => void> = [];
  #open = false;
  /** The claim window ended with room below a chunk: the next claim takes what room there is. */
  #shortClaim = false;
  /**
   * The last claim answered with a delivery already held (given back): the next claim waits as
   * after a failed one, so a store that keeps answering so cannot spin the loop.
   */
  #conflict: Error | null = null;
  /** Resolved when every claim handed out is handled. */
  #idleWaiters: Array<() => void> = [];
  readonly #wake = () => this.#wakeups.wake();

  constructor(options: ClaimFeedOptions) {
    this.#options = options;
    this.#rule = claimRoomRule(options.concurrency, options.prefetch);
    this.#buffer = new ClaimBuffer({
      concurrency: options.concurrency,
      claim: (limit) => options.claim(limit, this.#buffer.holding()),
      renew: (claims) => options.renew(claims),
      release: (claims) => options.release(claims),
      freshness: options.freshness,
      gate: options.gate,
      onReady: () => {
        this.#serve();
        this.#wakeups.wake();
      },
      onClaimed: (claims) => options.onClaimed(claims),
      onWithdrawn: (count) => options.onWithdrawn(count),
      onRenewError: (error, claims) => options.onStoreError(error, "recheck", claims[0]),
      onConflict: (claim, at) => {
        const message = `Claim buffer: claimed delivery ${claim.delivery.id}, already ${at}; that claim was given back`;
        this.#conflict = new Error(message);
        options.onStoreError(this.#conflict, "claim", claim);
      },
    });
    this.#wakeups = createWakeups(() => this.#wantsClaims());
  }

  /** Requests in flight: claims handed out whose request has not ended (the buffer's ledger). */
  get inFlight(): number {
    return this.#buffer.inFlight;
  }

  /** The next claim to send, once there is one; null once the feed stops or `signal` aborts. */
  next(signal?: AbortSignal): Promise<ClaimHandle | null> {
    if (!this.#open || signal?.aborted) return Promise.resolve(null);
    if (this.#waiting.length === 0) {
      const [claim] = this.#buffer.take(1);
      if (claim !== undefined) return Promise.resolve(this.#handle(claim));
    }
    return new Promise((resolve) => {
      if (!signal) {
        this.#waiting.push(resolve);
        return;
      }
      const stop = () => {
        this.#waiting = this.#waiting.filter((each) => each !== settle);
        resolve(null);
      };
      const settle = (handle: ClaimHandle | null) => {
        signal.removeEventListener("abort", stop);
        resolve(handle);
      };
      this.#waiting.push(settle);
      signal.addEventListener("abort", stop, { once: true });
    });
  }

  /** The handle of a claim the buffer just handed out. */
  #handle(claim: Claim): ClaimHandle {
    const id = claim.delivery.id;
    return {
      claim,
      requestEnded: () => this.#requestEnded(id),
      handled: () => this.#handled(id),
    };
  }

  /**
   * A request handed out is over: its slot is free while its result is written. The wake-up
   * waits for the slot's next take, so room is judged as it will be, not one claim early.
   */
  #requestEnded(id: number): void {
    this.#buffer.requestEnded(id);
    queueMicrotask(this.#wake);
  }

  /** A claim handed out is over (its result written, or given up): it may be claimed again. */
  #handled(id: number): void {
    this.#buffer.handled(id);
    if (this.#buffer.handedOut === 0) {
      const waiters = this.#idleWaiters;
      this.#idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
    this.#wakeups.wake();
  }

  /**
   * Claims until `signal` aborts (with `once`: until nothing more is due now, and a failed claim
   * is thrown), then stops: hands out nothing more, gives back what it holds, and resolves once
   * every claim handed out is handled.
   */
  async run(options: { signal: AbortSignal; once?: boolean }): Promise<void> {
    this.#open = true;
    this.#buffer.start();
    try {
      await (options.once ? this.#claimOnce(options.signal) : this.#claimUntil(options.signal));
    } finally {
      await this.#stop();
    }
  }

  async #claimUntil(signal: AbortSignal): Promise<void> {
    // Store calls failed in a row on the idle path (claim, or looking for the next due time).
    let storeErrors = 0;
    while (!signal.aborted) {
      let more: boolean;
      try {
        more = await this.#topUp();
      } catch (error) {
        this.#options.onStoreError(error, "claim");
        await this.#pauseAfter(error, storeErrors++, signal);
        continue;
      }
      const conflict = this.#conflict;
      this.#conflict = null;
      if (conflict !== null) {
        await this.#pauseAfter(conflict, storeErrors++, signal);
        continue;
      }
      storeErrors = 0;
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
        this.#options.onStoreError(failed, "wait");
        await this.#pauseAfter(failed, storeErrors++, signal);
      }
    }
  }

  async #claimOnce(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const more = await this.#topUp();
      if (more) {
        await this.#untilRoom(signal);
        continue;
      }
      if (this.inFlight === 0 && this.#buffer.held === 0) {
        // Nothing more was due: wait for the results being written, then look once more (a
        // result written meanwhile may not have been visible to the claim).
        if (this.#buffer.handedOut === 0) break;
        await this.#allHandled();
        continue;
      }
      await untilAborted(this.#wakeups.progress(), signal);
    }
  }

  /** Hands out nothing more, gives back the claims held, waits for those handed out. */
  async #stop(): Promise<void> {
    this.#open = false;
    for (const resolve of this.#waiting.splice(0)) resolve(null);
    const drained = this.#buffer.drain();
    while (this.#buffer.handedOut > 0) await this.#allHandled();
    await drained;
  }

  /**
   * Tops the buffer up (after the claim window, any room; else as #wantsClaims() asks) and hands
   * out what it can; returns whether the queue had as many due as there was room for. A claim's
   * failure is thrown.
   */
  async #topUp(): Promise<boolean> {
    const short = this.#shortClaim;
    this.#shortClaim = false;
    const room = this.#room();
    let more = true;
    if (short ? room > 0 : room >= this.#rule.minClaim) {
      more = (await this.#buffer.topUp(room)) === room;
    }
    this.#options.onClaimAnswered();
    this.#serve();
    return more;
  }

  /** Hands a claim to every slot waiting that the buffer has one for. */
  #serve(): void {
    if (!this.#open || this.#waiting.length === 0) return;
    const taken = this.#buffer.take(this.#waiting.length);
    for (const claim of taken) {
      (this.#waiting.shift() as (handle: ClaimHandle | null) => void)(this.#handle(claim));
    }
  }

  /**
   * Waits until the buffer wants claims. When it claims in chunks (no prefetch), a few free slots
   * are also claimed for once they have stood free CLAIM_WINDOW_MS: slow requests holding the
   * other slots must not keep new work waiting for them.
   */
  async #untilRoom(signal: AbortSignal): Promise<void> {
    if (this.#wantsClaims()) return;
    if (this.#rule.minClaim === 1) {
      await untilAborted(this.#wakeups.room(), signal);
      return;
    }
    if (this.#room() === 0) {
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
    this.#shortClaim = windowEnded && !this.#wantsClaims();
  }

  /** Claims that would fit now (claim-room.ts); none once the feed stops. */
  #room(): number {
    if (!this.#open) return 0;
    const { inFlight } = this;
    const resultsWaiting = this.#options.gate.resultsWaiting();
    return claimRoom(this.#rule, { inFlight, held: this.#buffer.held, resultsWaiting });
  }

  /** Whether a claim is worth making now: room for at least a chunk. */
  #wantsClaims(): boolean {
    return this.#room() >= this.#rule.minClaim;
  }

  /** Resolves once every claim handed out is handled. */
  #allHandled(): Promise<void> {
    if (this.#buffer.handedOut === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** After a failed store call on the idle path. */
  #pauseAfter(error: unknown, failures: number, signal: AbortSignal): Promise<void> {
    const baseDelayMs = this.#options.claimErrorDelayMs;
    const store = this.#options.availability;
    return pauseAfterFailure({ error, failures, baseDelayMs, signal, store });
  }

  /** Sleeps until new work, its due time, or progress; a failed look is returned, not thrown. */
  async #idle(signal: AbortSignal): Promise<unknown> {
    const wait = new AbortController();
    const stop = () => wait.abort();
    signal.addEventListener("abort", stop, { once: true });
    // Settled either way, so a look that fails after progress() won the race is still handled.
    const looked = this.#options.waitForWork(wait.signal).then(
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
