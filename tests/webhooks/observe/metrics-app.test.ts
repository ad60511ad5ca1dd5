import { describe, expect, test } from "bun:test";
import { createMemoryLogger } from "../../../lib/log.ts";
import { createMetrics, type MetricsSource } from "../../../lib/webhooks/observe/metrics.ts";
import { createMetricsApp } from "../../../lib/webhooks/observe/metrics-app.ts";
import { parsePrometheusText } from "../../fakes/prometheus-text.ts";

const source: MetricsSource = {
  stats: async () => ({ queued: 3, delivering: 1, successful: 10, failed: 2 }),
  dueSummary: async () => ({ count: 3, oldestDueAt: null }),
  workers: async () => [],
};

describe("createMetricsApp()", () => {
  test("serves GET /metrics in Prometheus text format", async () => {
    const app = createMetricsApp(createMetrics({ source }));
    const response = await app.request("/metrics");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toStartWith("text/plain; version=0.0.4");
    const samples = parsePrometheusText(await response.text());
    expect(samples.get('webhook_deliveries{state="queued"}')).toBe(3);
    expect(samples.get("webhook_deliveries_due")).toBe(3);
    expect((await app.request("/other")).status).toBe(404);
  });

  test("with an admin token, answers 401 without the right bearer token", async () => {
    const app = createMetricsApp(createMetrics({ source }), { adminToken: "s3cret-token" });
    const missing = await app.request("/metrics");
    expect(missing.status).toBe(401);
    expect(missing.headers.get("www-authenticate")).toBe('Bearer realm="metrics"');
    const wrong = { headers: { authorization: "Bearer nope" } };
    expect((await app.request("/metrics", wrong)).status).toBe(401);
    const right = { headers: { authorization: "Bearer s3cret-token" } };
    expect((await app.request("/metrics", right)).status).toBe(200);
  });

  test("answers 503 and logs when the database cannot be read", async () => {
    const logger = createMemoryLogger();
    const broken: MetricsSource = {
      ...source,
      stats: async () => {
        throw new Error("database is locked");
      },
    };
    const app = createMetricsApp(createMetrics({ source: broken }), { logger });
    const response = await app.request("/metrics");
    expect(response.status).toBe(503);
    expect(await response.text()).toBe("Metrics unavailable\n");
    expect(logger.lines).toEqual(["warn Metrics unavailable: database is locked"]);
  });

  test("answers 421 to a Host that is none of its names, before the token is looked at", async () => {
    const app = createMetricsApp(createMetrics({ source }), {
      adminToken: "s3cret-token",
      hostNames: { allowed: ["worker1.example", "127.0.0.1"], variable: "SOME_HOSTS" },
    });
    const right = { authorization: "Bearer s3cret-token" };
    const get = (host: string) => app.request("/metrics", { headers: { host, ...right } });
    for (const host of [
      "127.0.0.1:9464",
      "[::1]:9464",
      "10.1.2.3",
      "localhost",
      "worker1.example",
    ]) {
      expect((await get(host)).status, host).toBe(200);
    }
    const refused = await get("rebound.example:9464");
    expect(refused.status).toBe(421);
    expect(await refused.text()).toBe(
      'This server does not answer to the name "rebound.example": if it is yours, add it to SOME_HOSTS.\n',
    );
    const unauthenticated = await app.request("/metrics", { headers: { host: "rebound.example" } });
    expect(unauthenticated.status).toBe(421);
  });
});
