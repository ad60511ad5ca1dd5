import type { Sleep } from "../../async/sleep.ts";
import type { Claim, Delivered } from "../model.ts";
import { type AttemptPolicies, judgeAttempt } from "../policy/judge.ts";
import type { SendResult } from "../sending/send.ts";
import { type LeaseLimits, mayStillSend, requestCapMs } from "./lease-rules.ts";

/**
 * The loop's `send`: one attempt for a claim, judged. Waits for the claim's send slot (a rate
 * limit or a pause, up to a second ahead), checks the lease one last time, makes the request
 * with a timeout that ends before the lease, and judges the result. Null: not sent, the lease no
 * longer outlasts the request (the process was paused), or the attempt gave it back; the claim
 * is given back.
 */
export function createClaimSender(options: {
  limits: LeaseLimits;
  policies: AttemptPolicies;
  /**
   * The HTTP attempt (sendAttempt with the worker's options), its timeout capped; null when it
   * ended before the request (render-at-send.ts): nothing sent, the claim is given back.
   */
  attempt(
    claim: Claim,
    request: { maxTimeoutMs: number; signal: AbortSignal },
  ): Promise<SendResult | null>;
  sleep: Sleep;
  now: () => number;
  random?: () => number;
}): (claim: Claim, signal: AbortSignal) => Promise<Delivered | null> {
  const { limits, policies, sleep, now, random } = options;
  const judged = (claim: Claim, result: SendResult): Delivered =>
    judgeAttempt({ result, claim, policies, now: now(), random });
  // Not an async function: the usual claim has no slot to wait for, and its attempt's promise is
  // judged directly instead of through one more async frame per delivery.
  const sendNow = (claim: Claim, signal: AbortSignal): Promise<Delivered | null> => {
    // A process paused (SIGSTOP, a VM freeze) past its lease must not send what another worker
    // may have taken over meanwhile.
    const t = now();
    if (!mayStillSend(claim, t, limits)) return Promise.resolve(null);
    return options
      .attempt(claim, { maxTimeoutMs: requestCapMs(claim, t), signal })
      .then((result) => (result === null ? null : judged(claim, result)));
  };
  return (claim, signal) => {
    const wait = (claim.notBefore ?? 0) - now();
    if (wait <= 0) return sendNow(claim, signal);
    return sleep(wait, signal).then(() => {
      if (signal.aborted) throw signal.reason ?? new Error("Aborted");
      return sendNow(claim, signal);
    });
  };
}
