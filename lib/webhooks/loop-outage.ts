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
      if (!reopening && collaborators.untilReachable) {
        reopening = true;
        collaborators
          .untilReachable(options.signal())
          .catch(() => {})
          .finally(() => {
            reopening = false;
            options.onOpen();
          });
      }
      return true;
    },
  };
}

/**
 * Records a result, keeping it in memory through an outage and writing it when the database
 * answers again (the write is fenced: a lease taken over meanwhile discards it). Null when it
 * could not be recorded: another kind of error, or the requests in flight were aborted (hard
 * shutdown); then the lease runs out and the delivery is retried, as after a crash.
 */
export async function recordThroughOutage<D>(
  collaborators: OutageCollaborators<D>,
  options: { claim: Claim; delivered: D; signal: AbortSignal; hooks: FinishErrorHook },
): Promise<boolean | null> {
  const { claim, delivered, signal, hooks } = options;
  for (;;) {
    try {
      return await collaborators.finish(claim, delivered);
    } catch (error) {
      hooks.onError?.(error, { phase: "finish", claim });
      const outage = collaborators.isUnreachable?.(error) === true;
      if (!outage || !collaborators.untilReachable || signal.aborted) return null;
      await collaborators.untilReachable(signal);
      if (signal.aborted) return null;
    }
  }
}
