import { parseAllowList } from "../../lib/http/ssrf.ts";
import type { Store } from "../../lib/webhooks/ports.ts";
import { createDeliveryWorker, type DeliveryWorkerOptions } from "../../lib/worker/bind.ts";

type TestWorkerConfig = DeliveryWorkerOptions["config"];

/**
 * A worker's settings for tests that send to a fake endpoint on 127.0.0.1: 5 s requests, one
 * attempt, a 30 s lease, one slot, retries after a second; a test names only what it changes.
 */
export function loopbackWorkerConfig(overrides: Partial<TestWorkerConfig> = {}): TestWorkerConfig {
  return {
    timeoutMs: 5000,
    maxAttempts: 1,
    allowList: parseAllowList("127.0.0.1"),
    leaseMs: 30_000,
    concurrency: 1,
    retryBaseMs: 1000,
    retryMaxMs: 1000,
    ...overrides,
  };
}

/**
 * A real delivery worker on a test app's store and clock (`app.clock.now`), with
 * loopbackWorkerConfig(`config`): what the app queued goes to the fake endpoint over HTTP.
 */
export function appWorker(
  app: { store: Store; clock: { now: Date } },
  options: { config?: Partial<TestWorkerConfig>; random?: () => number } = {},
) {
  return createDeliveryWorker({
    store: app.store,
    now: () => app.clock.now.getTime(),
    random: options.random,
    config: loopbackWorkerConfig(options.config),
  });
}
