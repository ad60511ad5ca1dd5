import { abortableSleep } from "../../async/sleep.ts";
import type { Claim } from "../model.ts";

/** Whether the database answers: one object, bound to the store (Store.reachable and kin). */
export interface Availability {
  /** False while the database is known to be unreachable. */
  reachable(): boolean;
  /** Resolves when the database answers again after an outage, or on abort. */
  untilReachable(signal: AbortSignal): Promise<void>;
  /** Whether a failed store call means the database is unreachable (an outage). */
  isUnreachable(error: unknown): boolean;
}

/** The database always answers (a test's fake queue). */
export const ALWAYS_AVAILABLE: Availability = {
  reachable: () => true,
  untilReachable: async () => {},
  isUnreachable: () => false,
};

/**
 * Closed while a result cannot be recorded: the database is unreachable, or a result already
 * made waits to be written. A request made then would be made again once its lease ran out, so
 * held claims wait unsent; and when the database answers, the results held are written before
 * any new request or claim (they are fenced: one whose lease was taken over is discarded).
 */
export interface OutageGate {
  /** A question only: starts nothing. */
  closed(): boolean;
  /** Results whose write failed and is being retried. */
  resultsWaiting(): number;
  /** Counts a result as waiting; call the returned function once it is written or given up. */
  holdResult(): () => void;
  /** Resolves once the gate is open, or on abort. */
  opened(signal: AbortSignal): Promise<void>;
}

export function createOutageGate(availability: Partial<Availability>): OutageGate {
  let waiting = 0;
  let drained: Array<() => void> = [];
  const unreachable = () => availability.reachable?.() === false;
  function closed(): boolean {
    return waiting > 0 || unreachable();
  }
  function untilNoneWaiting(signal: AbortSignal): Promise<void> {
    if (waiting === 0 || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        signal.removeEventListener("abort", done);
        resolve();
      };
      drained.push(done);
      signal.addEventListener("abort", done, { once: true });
    });
  }
  return {
    closed,
    resultsWaiting: () => waiting,
    holdResult() {
      waiting++;
      let done = false;
      return () => {
        if (done) return;
        done = true;
        if (--waiting > 0) return;
        const woken = drained;
        drained = [];
        for (const wake of woken) wake();
      };
    },
    async opened(signal) {
      // A wait on an aborted signal returns at once: checked first, or this would spin while
      // the database stays down after a hard stop.
      while (!signal.aborted && closed()) {
        if (unreachable() && availability.untilReachable) {
          await availability.untilReachable(signal).catch(() => {});
          // Still down (an answer from a dying connection): look again a little later.
          if (unreachable() && !signal.aborted) await abortableSleep(100, signal);
        } else {
          await untilNoneWaiting(signal);
        }
      }
    },
  };
}

/** The part of the loop's collaborators writing a result concerns. */
export interface RecordCollaborators<D> {
  finish(claim: Claim, delivered: D): Promise<boolean>;
  isUnreachable?(error: unknown): boolean;
  untilReachable?(signal: AbortSignal): Promise<void>;
}

interface FinishErrorHook {
  onError?(error: unknown, context: { phase: "finish"; claim: Claim }): void;
}

export interface RecordOptions<D> {
  claim: Claim;
  delivered: D;
  signal: AbortSignal;
  hooks: FinishErrorHook;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  gate?: OutageGate;
  /**
   * The longest pause between tries (default 5 s). The worker keeps it to a quarter of its
   * lease: after an outage other workers wait one lease of grace for the owner's result.
   */
  maxDelayMs?: number;
}

/**
 * A result whose first write failed with `failed` (the loop makes that first write itself: the
 * usual result is written at once, with no wait): kept in memory through an outage and written
 * when the database answers again, retried with a backoff after any other failure (a busy lock,
 * a deadlock, a full disk). The write is fenced, so once a lease is taken over meanwhile it is
 * discarded, never applied twice. While it waits, `gate` counts it (no new request starts). Null
 * only when the requests in flight were aborted (hard shutdown); then the lease runs out and the
 * delivery is retried, as after a crash.
 */
export async function recordAfterFailure<D>(
  collaborators: RecordCollaborators<D>,
  options: RecordOptions<D>,
  failed: unknown,
): Promise<boolean | null> {
  const { claim, delivered, signal, hooks } = options;
  // Failed once: the result now waits, and no new request starts until it is written.
  const written = options.gate?.holdResult();
  try {
    for (let failures = 0; ; failures++) {
      hooks.onError?.(failed, { phase: "finish", claim });
      if (signal.aborted) return null;
      const outage = collaborators.isUnreachable?.(failed) === true;
      if (outage && collaborators.untilReachable) await collaborators.untilReachable(signal);
      else
        await (options.sleep ?? abortableSleep)(retryDelayMs(failures, options.maxDelayMs), signal);
      if (signal.aborted) return null;
      try {
        return await collaborators.finish(claim, delivered);
      } catch (error) {
        failed = error;
      }
    }
  } finally {
    written?.();
  }
}

/** 100 ms doubling to 5 s (or `maxMs`) between tries to record a result after a failure that is no outage. */
function retryDelayMs(failures: number, maxMs = 5000): number {
  return Math.min(maxMs, 100 * 2 ** failures);
}
