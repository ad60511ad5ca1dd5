import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import type { AttemptOutcome } from "../../../lib/webhooks/model.ts";
import { change } from "../../fakes/change.ts";
import { claimDue } from "../../fakes/delivery.ts";
import { createClient, T0, testApp } from "../harness.ts";

const TOKEN = "webhook-stats-test-token-0123";
const MIN = 60_000;
const HOUR = 60 * MIN;

let t: ReturnType<typeof testApp>;
let api: ReturnType<typeof createClient>;

beforeEach(() => {
  t = testApp({ adminToken: TOKEN });
  api = createClient(t.app, { headers: { authorization: `Bearer ${TOKEN}` } });
});
afterEach(() => t.store.close());

/** One delivery to `webhookId` with one attempt `ago` ms before T0, ended as the outcome says. */
async function attempt(
  webhookId: number,
  ago: number,
  outcome: AttemptOutcome,
  durationMs: number,
) {
  await t.store.queue.enqueue(change(), { webhookId });
  const claim = await claimDue(t.store, { now: T0.getTime() });
  const ok = outcome === "success";
  await t.store.queue.finish(
    claim,
    {
      startedAt: T0.getTime() - ago,
      durationMs,
      statusCode: ok ? 200 : outcome === "http_error" ? 503 : null,
      outcome,
      error: ok ? null : "failed",
      responseHeaders: null,
      responseBody: null,
    },
    ok ? { state: "successful" } : { state: "queued", nextAttemptAt: T0.getTime() + 5 * MIN },
  );
}

/** A webhook that answered twice, then failed three times in the last hour. */
async function failingWebhook(): Promise<number> {
  const { id } = await t.store.webhooks.create({ name: "erp", url: "https://erp.example/in" });
  await attempt(id, 3 * HOUR, "success", 40);
  await attempt(id, 2 * HOUR, "success", 60);
  await attempt(id, 40 * MIN, "http_error", 100);
  await attempt(id, 30 * MIN, "timeout", 10_000);
  await attempt(id, 20 * MIN, "network_error", 3);
  return id;
}

describe("a webhook's health", () => {
  test("GET /api/webhooks/{id}/stats answers the attempts counted by hand", async () => {
    const id = await failingWebhook();
    const response = await api.request(`/api/webhooks/${id}/stats`);
    expect(response.status).toBe(200);
    const at = (ms: number) => new Date(T0.getTime() - ms).toISOString();
    expect(await response.json()).toEqual({
      webhook_id: id,
      status: "failing",
      windows: {
        hour: {
          since: at(HOUR),
          attempts: 3,
          success_rate: 0,
          outcomes: {
            success: 0,
            http_error: 1,
            timeout: 1,
            network_error: 1,
            blocked: 0,
            lease_expired: 0,
            template_error: 0,
          },
        },
        day: expect.objectContaining({ attempts: 5, success_rate: 0.4 }),
        week: expect.objectContaining({ since: at(7 * 24 * HOUR), attempts: 5 }),
      },
      last_success_at: at(2 * HOUR),
      failing_since: at(40 * MIN),
      consecutive_failures: 3,
      // Answered attempts: 40, 60, 100 and 10,000 ms; the network error had no answer.
      latency_ms: { p50: 60, p95: 10_000, sample: 4 },
      next_retry_at: new Date(T0.getTime() + 5 * MIN).toISOString(),
    });
    expect((await api.request("/api/webhooks/999/stats")).status).toBe(404);
    expect((await createClient(t.app).request(`/api/webhooks/${id}/stats`)).status).toBe(401);
    const document = (await (await api.request("/api/openapi.json")).json()) as {
      paths: Record<string, unknown>;
    };
    expect(document.paths["/api/webhooks/{id}/stats"]).toBeDefined();
  });

  test("the admin's webhook page opens with its health, the list has a Health column", async () => {
    const id = await failingWebhook();
    const page = await (await api.request(`/admin/webhooks/${id}`)).text();
    const health = page.indexOf('id="health"');
    expect(health).toBeGreaterThan(-1);
    expect(health).toBeLessThan(page.indexOf('class="stacked"'));
    expect(page).toContain("3 attempts failed in a row");
    expect(page).toContain("p50 60 ms, p95 10.00 s");
    const list = await (await api.request("/admin/webhooks")).text();
    expect(list).toContain("<th>Health</th>");
    expect(list).toContain("40% of 5 in 24 h");
  });
});
