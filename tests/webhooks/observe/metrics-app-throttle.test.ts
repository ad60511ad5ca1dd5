import { expect, test } from "bun:test";
import { createLoginThrottle } from "../../../lib/http/token-throttle.ts";
import { createMemoryLogger } from "../../../lib/log.ts";
import { createMetrics, type MetricsSource } from "../../../lib/webhooks/observe/metrics.ts";
import { createMetricsApp } from "../../../lib/webhooks/observe/metrics-app.ts";

const source: MetricsSource = {
  stats: async () => ({ queued: 0, delivering: 0, successful: 0, failed: 0 }),
  dueSummary: async () => ({ count: 0, oldestDueAt: null }),
  workers: async () => [],
};

test("a worker's metrics port throttles wrong bearer tokens per client and logs them", async () => {
  const clock = { t: 1_000_000 };
  const logger = createMemoryLogger();
  const app = createMetricsApp(createMetrics({ source }), {
    adminToken: "s3cret-token-0123456789",
    logger,
    throttle: createLoginThrottle({ freeFailures: 2 }),
    now: () => clock.t,
  });
  const from = (address: string, token: string) =>
    app.request(
      "/metrics",
      { headers: { authorization: `Bearer ${token}` } },
      { requestIP: () => ({ address }) },
    );
  for (let i = 0; i < 3; i++) expect((await from("198.51.100.9", "guess")).status).toBe(401);
  const locked = await from("198.51.100.9", "s3cret-token-0123456789");
  expect(locked.status).toBe(429);
  expect(locked.headers.get("retry-after")).toBe("1");
  expect((await from("198.51.100.10", "s3cret-token-0123456789")).status).toBe(200);
  clock.t += 1000;
  expect((await from("198.51.100.9", "s3cret-token-0123456789")).status).toBe(200);
  expect(logger.lines).toEqual([
    "warn Wrong admin bearer token on the metrics port from 198.51.100.9 (1 in a row)",
    "warn Wrong admin bearer token on the metrics port from 198.51.100.9 (2 in a row)",
    "warn Wrong admin bearer token on the metrics port from 198.51.100.9 (3 in a row; further tries refused for 1 s)",
  ]);
  // No header at all is no guess: never counted.
  for (let i = 0; i < 5; i++) expect((await app.request("/metrics")).status).toBe(401);
  expect(logger.lines).toHaveLength(3);
});
