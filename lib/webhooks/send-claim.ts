import type { Sleep } from "../async/sleep.ts";
import { type LeaseLimits, mayStillSend, requestCapMs } from "./lease-rules.ts";
import type { Claim, Delivered } from "./model.ts";
import { type AttemptPolicies, judgeAttempt } from "./policy/judge.ts";
import type { SendResult } from "./send.ts";

/**
 * The loop's `send`: one attempt for a claim, judged. Waits for the claim's send slot (a rate
 * limit or a pause, up to a second ahead), checks the lease one last time, makes the request
 * with a timeout that ends before the lease, and judges the result. Null: not sent, the lease no
 * longer outlasts the request (the process was paused); the claim is given back.
 */
export function createClaimSender(options: {
  limits: LeaseLimits;
  policies: AttemptPolicies;
  /** The HTTP attempt (sendAttempt with the worker's options), its timeout capped. */
  attempt(
    claim: Claim,
    request: { maxTimeoutMs: number; signal: AbortSignal },
  ): Promise<SendResult>;
  sleep: Sleep;
  now: () => number;
  random?: () => number;
}): (claim: Claim, signal: AbortSignal) => Promise<Delivered | null> {
  const { limits, policies, sleep, now } = options;
  return async (claim, signal) => {
    const wait = (claim.notBefore ?? 0) - now();
    if (wait > 0) {
      await sleep(wait, signal);
      if (signal.aborted) throw signal.reason ?? new Error("Aborted");
    }
    // A process paused (SIGSTOP, a VM freeze) past its lease must not send what another worker
    // may have taken over meanwhile.
    if (!mayStillSend(claim, now(), limits)) return null;
    const result = await options.attempt(claim, {
      maxTimeoutMs: requestCapMs(claim, now()),
      signal,
    });
    return judgeAttempt({ result, claim, policies, now: now(), random: options.random });
  };
}
