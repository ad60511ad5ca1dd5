import type { Logger } from "../log.ts";
import type { Store } from "../store/types.ts";
import type { WorkerConfig } from "./config.ts";
import { createDeliveryWorker, type DeliveryWorkerOptions } from "./deliveries.ts";

export interface RunWorkerOptions {
  store: Store;
  config: WorkerConfig;
  logger: Logger;
  /** Drain what is due, then return (`--once`). */
  once?: boolean;
  /** First SIGINT/SIGTERM: stop claiming, let in-flight requests finish. */
  stop: AbortSignal;
  /** Second signal: abort in-flight requests now and release them. */
  abortInFlight: AbortSignal;
  fetch?: typeof fetch;
  hooks?: DeliveryWorkerOptions["hooks"];
  verbose?: boolean;
}

/** The worker process: runs until stopped (or drained with `once`), shutting down gracefully. */
export async function runWorker(options: RunWorkerOptions): Promise<void> {
  const { config, logger } = options;
  const worker = createDeliveryWorker({
    store: options.store,
    config,
    logger,
    fetch: options.fetch,
    hooks: options.hooks,
    verbose: options.verbose,
  });
  logger.info(
    `Worker ${worker.id} ${options.once ? "draining due deliveries" : "started"}: concurrency ${config.concurrency}${config.prefetch ? ` (+${config.prefetch} prefetched)` : ""}, timeout ${config.timeoutMs} ms, lease ${config.leaseMs} ms, max attempts ${config.maxAttempts}`,
  );

  // The grace period starts at the first signal; after it, in-flight requests are aborted.
  const hard = new AbortController();
  const forward = () => hard.abort();
  options.abortInFlight.addEventListener("abort", forward, { once: true });
  let graceTimer: ReturnType<typeof setTimeout> | undefined;
  const onStop = () => {
    if (worker.inFlight > 0) {
      logger.info(
        `Stopping: waiting up to ${config.shutdownGraceMs} ms for ${worker.inFlight} in-flight ${worker.inFlight === 1 ? "delivery" : "deliveries"} (signal again to abort them)`,
      );
    }
    graceTimer = setTimeout(forward, config.shutdownGraceMs);
  };
  options.stop.addEventListener("abort", onStop, { once: true });

  try {
    const signals = { signal: options.stop, abortInFlight: hard.signal };
    await (options.once ? worker.runOnce(signals) : worker.run(signals));
  } finally {
    clearTimeout(graceTimer);
    options.stop.removeEventListener("abort", onStop);
    options.abortInFlight.removeEventListener("abort", forward);
  }
  const c = worker.counts;
  logger.info(
    `Worker ${worker.id} stopped: ${c.successful} successful, ${c.retried} to retry, ${c.failed} failed, ${c.discarded} discarded, ${c.released} released`,
  );
}
