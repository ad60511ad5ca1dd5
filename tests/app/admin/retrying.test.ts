import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { isRetrying, retryingText } from "../../../lib/webhooks/delivery/retrying.ts";
import { change } from "../../fakes/change.ts";
import { appWorker } from "../../fakes/test-worker.ts";
import { type FakeEndpoint, startFakeEndpoint } from "../../fakes/webhook-endpoint.ts";
import { T0, testApp } from "../harness.ts";

let t: ReturnType<typeof testApp>;
let endpoint: FakeEndpoint;
let answers: number[];

beforeEach(() => {
  t = testApp();
  answers = [];
  endpoint = startFakeEndpoint(() => new Response("x", { status: answers.shift() ?? 200 }));
});
afterEach(async () => {
  await endpoint.stop();
  t.store.close();
});

/** A real worker on the app's store and clock: sends whatever is due now. */
function sendDue() {
  return appWorker(t, {
    random: () => 0.5,
    config: { maxAttempts: null, retryBaseMs: 10_000, retryMaxMs: 3_600_000 },
  }).runOnce();
}

/** The overview's Failed section, up to the next section. */
function failedSection(html: string): string {
  const start = html.indexOf("<h2>Failed");
  return html.slice(start, html.indexOf("<h2>", start + 1));
}

describe("a delivery waiting for an automatic retry", () => {
  test("is listed under Failed from its first failed attempt, saying when and which attempt", async () => {
    await t.store.webhooks.create({ name: "erp", url: `${endpoint.url}/in` });
    const [id] = await t.store.queue.enqueue(change());
    answers = [503];
    await sendDue();
    const stored = await t.store.queue.get(id ?? 0);
    expect(stored?.delivery).toMatchObject({ state: "queued", attempts: 1, lastStatus: 503 });

    // 503: at least 60 s (the floor), from 05:06:07: 05:07 UTC; the day schedule has 8 attempts.
    const failed = failedSection((await t.client.open("/admin/background-tasks")).html);
    expect(failed).toContain(`#${id}`);
    expect(failed).toContain("retrying automatically at 05:07 UTC (attempt 2 of 8)");
    expect(failed).toContain(">Retry</button>");
    const list = (await t.client.open("/admin/background-tasks/deliveries?state=failed")).html;
    expect(list).toContain("retrying automatically at 05:07 UTC (attempt 2 of 8)");
    const page = (await t.client.open(`/admin/background-tasks/deliveries/${id}`)).html;
    expect(page).toContain("retrying automatically at 05:07 UTC (attempt 2 of 8)");
    expect(page).toContain(">Retry</button>");
  });

  test("its Retry button sends it now, with no wait for the schedule", async () => {
    await t.store.webhooks.create({ name: "erp", url: `${endpoint.url}/in` });
    const [id] = await t.store.queue.enqueue(change());
    answers = [500];
    await sendDue();
    await sendDue(); // not due yet: nothing is sent
    expect(endpoint.requests).toHaveLength(1);

    const response = await t.client.submit(
      `/admin/background-tasks/deliveries/${id}/retry`,
      { return_to: "/admin/background-tasks" },
      { from: "/admin/background-tasks" },
    );
    expect(response.headers.get("location")).toContain("notice=retried");
    await sendDue();
    expect(endpoint.requests).toHaveLength(2);
    expect((await t.store.queue.get(id ?? 0))?.delivery).toMatchObject({
      state: "successful",
      attempts: 2,
    });
    // Delivered: gone from Failed.
    const failed = failedSection((await t.client.open("/admin/background-tasks")).html);
    expect(failed).not.toContain(`#${id}<`);
  });

  test("a queued delivery never attempted, or replayed after a 2XX, is not listed as failing", async () => {
    await t.store.webhooks.create({ name: "erp", url: `${endpoint.url}/in` });
    const [fresh] = await t.store.queue.enqueue(change());
    const failing = await t.store.queue.list({ failing: true });
    expect(failing.map((d) => d.id)).not.toContain(fresh);
    expect(isRetrying({ state: "queued", attempts: 1, lastStatus: 200 })).toBe(false);
    expect(isRetrying({ state: "queued", attempts: 1, lastStatus: null })).toBe(true);
  });
});

describe("retryingText()", () => {
  const now = T0.getTime();
  test("gives the time, the date too when the retry is on another day, and the attempt of the limit", () => {
    const d = { attempts: 6, nextAttemptAt: now + 10 * 3_600_000 };
    expect(retryingText(d, 8, now)).toBe("retrying automatically at 15:06 UTC (attempt 7 of 8)");
    expect(retryingText({ attempts: 7, nextAttemptAt: now + 20 * 3_600_000 }, 8, now)).toBe(
      "retrying automatically at 2025-03-05 01:06 UTC (attempt 8 of 8)",
    );
    expect(retryingText({ attempts: 1, nextAttemptAt: now }, undefined, now)).toBe(
      "retrying automatically at 05:06 UTC (attempt 2)",
    );
  });
});
