import type { Claim, Delivered } from "../webhooks/model.ts";
import type { Metrics } from "../webhooks/observe/metrics.ts";

/**
 * Worker observers that count every attempt this process made in `metrics` (a discarded late
 * result was still a request to the receiver) and every failed store call. Shaped as the loop's
 * WorkerHooks (lib/webhooks/delivery/loop.ts).
 */
export function metricsHooks(metrics: Pick<Metrics, "observeAttempt" | "observeStoreError">): {
  onFinished(claim: Claim, delivered: Delivered, applied: boolean): void;
  onError(error: unknown, context: { phase: string }): void;
} {
  return {
    onFinished(_claim, delivered) {
      metrics.observeAttempt(delivered.record);
    },
    onError(_error, context) {
      if (context.phase !== "deliver") metrics.observeStoreError(context.phase);
    },
  };
}
