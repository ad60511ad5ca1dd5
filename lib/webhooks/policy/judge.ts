import type { Claim, Delivered } from "../model.ts";
import { DEFAULT_SLOW_DOWN, type SlowDownSettings, slowDownUntil } from "./rate-limit.ts";
import { type AttemptResult, decideOutcome, type RetryPolicy } from "./retry.ts";
import { DEFAULT_RETRY_SCHEDULE, type RetrySchedule } from "./retry-schedule.ts";

/** The policies an attempt is judged by. */
export interface AttemptPolicies {
  retry: RetryPolicy;
  slowDown?: SlowDownSettings;
}

/**
 * What an attempt means, decided once (cf. Svix's handle_failed_dispatch): the delivery's next
 * state, a pause of the whole webhook when the receiver asked to slow down, and what happens to
 * the webhook's failure streak. Pure: the after-attempt step only writes what this returns.
 */
export function judgeAttempt(input: {
  result: AttemptResult & Pick<Delivered, "record">;
  claim: Pick<Claim, "attempt"> & {
    webhook: { failingSince?: number | null; retrySchedule?: RetrySchedule };
  };
  policies: AttemptPolicies;
  now: number;
  random?: () => number;
}): Delivered {
  const { result, claim, policies, now } = input;
  const outcome = decideOutcome(result, claim.attempt, policies.retry, {
    now,
    random: input.random,
    schedule: claim.webhook.retrySchedule ?? DEFAULT_RETRY_SCHEDULE,
  });
  const judged: Delivered = { record: result.record, outcome };
  const pause = slowDownUntil(
    { statusCode: result.statusCode, retryAfterMs: result.retryAfterMs, now },
    policies.slowDown ?? DEFAULT_SLOW_DOWN,
  );
  if (pause !== null) judged.pauseWebhookUntil = pause;
  // A success ends a streak known (or not known) to be running; the usual success, to a webhook
  // read with no streak, writes nothing more.
  if (outcome.state !== "successful") judged.streak = "extend";
  else if (claim.webhook.failingSince !== null) judged.streak = "end";
  return judged;
}
