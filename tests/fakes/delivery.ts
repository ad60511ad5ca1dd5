import type { AttemptRecord, Claim, Outcome } from "../../lib/webhooks/model.ts";
import type { WebhookHealth } from "../../lib/webhooks/policy/webhook-health.ts";
import type { Store } from "../../lib/webhooks/ports.ts";
import { change } from "./change.ts";

/** An attempt that got `statusCode` (or, when null, timed out). */
export function attemptRecord(
  statusCode: number | null,
  options: { startedAt?: number; durationMs?: number; responseHeaders?: string } = {},
): AttemptRecord {
  const ok = statusCode !== null && statusCode >= 200 && statusCode < 300;
  return {
    startedAt: options.startedAt ?? 0,
    durationMs: options.durationMs ?? 5,
    statusCode,
    outcome: statusCode === null ? "timeout" : ok ? "success" : "http_error",
    error: ok ? null : statusCode === null ? "Timed out after 10000 ms" : `HTTP ${statusCode}`,
    responseHeaders: options.responseHeaders ?? null,
    responseBody: null,
  };
}

/**
 * What the worker does with one claim, with the real queue: record the attempt (no automatic
 * retry, NetBox's default) and, when the queue accepted it, tell endpoint health.
 */
export async function completeClaim(
  store: Store,
  claim: Claim,
  record: AttemptRecord,
  health?: WebhookHealth,
): Promise<Outcome> {
  const outcome: Outcome = { state: record.outcome === "success" ? "successful" : "failed" };
  if ((await store.queue.finish(claim, record, outcome)) && health) {
    await health.afterAttempt({
      webhook: claim.webhook,
      streak: outcome.state === "successful" ? "end" : "extend",
      deliveryFailed: outcome.state === "failed",
      lastStatus: record.statusCode,
    });
  }
  return outcome;
}

/**
 * The store's claim on the first delivery due at `now` (default the wall clock), for worker "w1"
 * with a 30 s lease unless told otherwise; throws when nothing is due.
 */
export async function claimDue(
  store: Store,
  options: { now?: number; workerId?: string; leaseMs?: number } = {},
): Promise<Claim> {
  const [claim] = await store.queue.claim({
    workerId: options.workerId ?? "w1",
    limit: 1,
    leaseMs: options.leaseMs ?? 30_000,
    now: options.now ?? Date.now(),
  });
  if (!claim) throw new Error("expected a claim");
  return claim;
}

/** The one change tests enqueue, its delivery claimed now (worker "w1", a 30 s lease by default). */
export async function enqueueAndClaim(
  store: Store,
  options: { workerId?: string; leaseMs?: number } = {},
): Promise<{ id: number; claim: Claim }> {
  await store.queue.enqueue(change());
  const claim = await claimDue(store, options);
  return { id: claim.delivery.id, claim };
}
