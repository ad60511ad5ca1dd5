import { abortableSleep } from "../async/sleep.ts";
import type { Claim } from "./model.ts";

/** The part of the loop's collaborators (loop.ts) an outage concerns. */
interface OutageCollaborators<D> {
  finish(claim: Claim, delivered: D): Promise<boolean>;
  isUnreachable?(error: unknown): boolean;
  untilReachable?(signal: AbortSignal): Promise<void>;
  reachable?(): boolean;
}

interface FinishErrorHook {
  onError?(error: unknown, context: { phase: "finish"; claim: Claim }): void;
}

/**
 * Closed while the database is known to be unreachable: a result could not be recorded, and a
 * request made now would be made again once its lease ran out. Held claims wait unsent; when
 * the database answers, `onOpen` refills the slots.
 */
export function createSendGate(
  collaborators: Pick<OutageCollaborators<unknown>, "untilReachable" | "reachable">,
  options: { signal: () => AbortSignal; onOpen: () => void },
): { closed(): boolean } {
  let reopening = false;
  return {
    closed() {
      if (collaborators.reachable?.() !== false) return false;
      // After a hard stop nothing starts anyway, and a wait on an aborted signal returns at
      // once: reopening then would loop without end while the database stays down.
      if (!reopening && collaborators.untilReachable && !options.signal().aborted) {
        reopening = true;
        collaborators
          .untilReachable(options.signal())
          .catch(() => {})
          .finally(() => {
            reopening = false;
            if (!options.signal().aborted) options.onOpen();
          });
      }
      return true;
    },
  };
}

/**
 * Records a result, keeping it in memory through an outage and writing it when the database
 * answers again, and retrying with a backoff after any other failure (a busy lock, a deadlock):
 * the write is fenced, so once a lease is taken over meanwhile it is discarded, never applied
 * twice. Null only when the requests in flight were aborted (hard shutdown); then the lease runs
 * out and the delivery is retried, as after a crash.
 */
export async function recordThroughOutage<D>(
  collaborators: OutageCollaborators<D>,
  options: {
    claim: Claim;
    delivered: D;
    signal: AbortSignal;
    hooks: FinishErrorHook;
    sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  },
): Promise<boolean | null> {
  const { claim, delivered, signal, hooks } = options;
  for (let failures = 0; ; failures++) {
    try {
      return await collaborators.finish(claim, delivered);
    } catch (error) {
      hooks.onError?.(error, { phase: "finish", claim });
      if (signal.aborted) return null;
      const outage = collaborators.isUnreachable?.(error) === true;
      if (outage && collaborators.untilReachable) await collaborators.untilReachable(signal);
      else await (options.sleep ?? abortableSleep)(retryDelayMs(failures), signal);
      if (signal.aborted) return null;
    }
  }
}

/** 100 ms doubling to 5 s between tries to record a result after a failure that is no outage. */
function retryDelayMs(failures: number): number {
  return Math.min(5000, 100 * 2 ** failures);
}
