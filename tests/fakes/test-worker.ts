import { parseAllowList } from "../../lib/http/ssrf.ts";
import type { DeliveryWorkerOptions } from "../../lib/worker/bind.ts";

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
