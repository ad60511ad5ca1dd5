import {
  createWorker as createLoop,
  type Worker,
  type WorkerOptions,
} from "../../lib/webhooks/loop.ts";
import {
  type Availability,
  createOutageGate as createGate,
  type RecordCollaborators,
  type RecordOptions,
  recordAfterFailure,
} from "../../lib/webhooks/loop-outage.ts";
import type { Claim, Delivered } from "../../lib/webhooks/model.ts";

/** A result's whole write as the loop makes it: once, then recordAfterFailure if that failed. */
export async function recordThroughOutage<D>(
  collaborators: RecordCollaborators<D>,
  options: RecordOptions<D>,
): Promise<boolean | null> {
  try {
    return await collaborators.finish(options.claim, options.delivered);
  } catch (error) {
    return recordAfterFailure(collaborators, options, error);
  }
}

/**
 * The loop's collaborators as they were before issue 22: ten callbacks, among them `deliver`,
 * `sendable`, `recheck` and three for the database's availability. Mapped here onto today's
 * seven (claim, renew, send, finish, release, waitForWork, availability) and the Freshness
 * option, so the loop's original specification (tests/webhooks/loop.test.ts) runs unchanged
 * against the loop as it is now.
 */
export interface WorkerCollaborators {
  claim(limit: number, holding?: ReadonlySet<number>): Promise<Claim[]>;
  deliver(claim: Claim, signal: AbortSignal): Promise<Delivered | null>;
  sendable?(claim: Claim): boolean;
  recheck?(claims: Claim[]): Promise<Claim[]>;
  finish(claim: Claim, delivered: Delivered): Promise<boolean>;
  release(claims: Claim[]): Promise<void>;
  waitForWork(signal: AbortSignal): Promise<void>;
  isUnreachable?(error: unknown): boolean;
  untilReachable?(signal: AbortSignal): Promise<void>;
  reachable?(): boolean;
}

export function createWorker(old: WorkerCollaborators, options: WorkerOptions): Worker {
  const { sendable } = old;
  const availability: Availability = {
    reachable: () => old.reachable?.() !== false,
    untilReachable: (signal) => old.untilReachable?.(signal) ?? Promise.resolve(),
    isUnreachable: (error) => old.isUnreachable?.(error) === true,
  };
  return createLoop(
    {
      claim: (limit, holding) => old.claim(limit, holding),
      renew: (claims) => old.recheck?.(claims) ?? Promise.resolve(claims),
      send: (claim, signal) => old.deliver(claim, signal),
      finish: (claim, delivered) => old.finish(claim, delivered),
      release: (claims) => old.release(claims),
      waitForWork: (signal) => old.waitForWork(signal),
      availability:
        old.untilReachable || old.reachable || old.isUnreachable ? availability : undefined,
    },
    {
      ...options,
      freshness: sendable
        ? { now: () => 0, remember() {}, prepare: (claim) => (sendable(claim) ? claim : null) }
        : undefined,
    },
  );
}

/** The outage gate as the loop built it before (createSendGate): with the loop's signal and reopening callback, unused now. */
export function createSendGate(
  availability: Partial<Availability>,
  _loop: { signal: () => AbortSignal; onOpen: () => void },
) {
  return createGate(availability);
}
