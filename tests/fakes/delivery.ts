import type { AttemptRecord, Claim, Outcome } from "../../lib/webhooks/model.ts";
import type { WebhookHealth } from "../../lib/webhooks/policy/webhook-health.ts";
import type { Store } from "../../lib/webhooks/ports.ts";

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
