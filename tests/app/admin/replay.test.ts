import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import type { Store } from "../../../lib/webhooks/ports.ts";
import { itemChange } from "../../fakes/change.ts";
import { record } from "../../store/contract.ts";
import { T0, testApp } from "../harness.ts";

const HOUR = 3_600_000;
let t: ReturnType<typeof testApp>;

beforeEach(() => {
  t = testApp();
});
afterEach(() => t.store.close());

/** Webhook 1 with a successful delivery queued at hours 0, 1, 2 and a failed one at hour 3. */
async function ended(store: Store) {
  const hook = await store.webhooks.create({ name: "erp", url: "https://erp.example/h" });
  for (let hour = 0; hour < 4; hour++) {
    t.clock.now = new Date(T0.getTime() + hour * HOUR);
    await store.queue.enqueue(itemChange(hour + 1), { webhookId: hook.id });
  }
  const now = t.clock.now.getTime();
  for (const claim of await store.queue.claim({ workerId: "w", limit: 10, leaseMs: 1000, now })) {
    const fails = claim.delivery.objectId === 4;
    await store.queue.finish(
      claim,
      record(fails ? { statusCode: 500, outcome: "http_error" } : {}),
      fails ? { state: "failed" } : { state: "successful" },
    );
  }
  t.clock.now = new Date(T0.getTime() + 10 * HOUR);
  return hook;
}

/** `datetime-local` as a browser posts it: no zone, the admin's times being UTC. */
function local(hours: number): string {
  return new Date(T0.getTime() + hours * HOUR).toISOString().slice(0, 19);
}

/** The deliveries' states, in the order of their items (1 to 4). */
async function states() {
  const page = await t.store.queue.search({}, { limit: 10, offset: 0 });
  return page.deliveries
    .toSorted((a, b) => (a.objectId ?? 0) - (b.objectId ?? 0))
    .map((d) => d.state);
}

/** The page of a webhook whose four deliveries ended, item 4's failed (ended()). */
async function endedPage(): Promise<string> {
  const hook = await ended(t.store);
  return `/admin/webhooks/${hook.id}`;
}

describe("the Replay form on a webhook's page", () => {
  test("is on the page, and replays a time range, successful ones included", async () => {
    const page = await endedPage();
    const { html } = await t.client.open(page);
    expect(html).toContain(`action="${page}/replay"`);
    expect(html).toContain("<h2>Replay</h2>");
    const response = await t.client.submit(
      `${page}/replay`,
      { since: local(1), until: local(3), successful: "on", failed: "on" },
      { from: page },
    );
    expect(response.status).toBe(303);
    const next = response.headers.get("location") ?? "";
    expect(next).toBe(`${page}?notice=replayed&n=2`);
    expect((await t.client.open(next)).html).toContain(
      "2 deliveries queued to be sent again; a worker will send them.",
    );
    expect(await states()).toEqual(["successful", "queued", "queued", "failed"]);
  });

  test("only the states ticked; empty times take all of the webhook's", async () => {
    const page = await endedPage();
    const response = await t.client.submit(`${page}/replay`, { failed: "on" }, { from: page });
    expect(response.headers.get("location")).toBe(`${page}?notice=replayed&n=1`);
    expect(await states()).toEqual(["successful", "successful", "successful", "queued"]);
  });

  test("a bad time or no state is shown under its field (400), nothing replayed", async () => {
    const page = await endedPage();
    const cases: Array<[Record<string, string>, string]> = [
      [{ since: "yesterday", successful: "on" }, "Must be an ISO 8601 date and time"],
      [{ since: local(3), until: local(1), successful: "on" }, "Must be after since"],
      [{ since: local(1) }, "Tick successful, failed or both"],
    ];
    for (const [fields, message] of cases) {
      const response = await t.client.submit(`${page}/replay`, fields, { from: page });
      expect(response.status).toBe(400);
      const html = await response.text();
      expect(html).toContain(message);
      expect(html).toContain("<h2>Replay</h2>");
    }
    expect((await t.store.queue.stats()).queued).toBe(0);
  });

  test("needs the CSRF token as every admin form; an unknown webhook is 404", async () => {
    const page = await endedPage();
    const forged = await t.client.submit(`${page}/replay`, { successful: "on" }, { csrf: "x" });
    expect(forged.status).toBe(403);
    const unknown = await t.client.submit(
      "/admin/webhooks/99/replay",
      { successful: "on" },
      {
        from: page,
      },
    );
    expect(unknown.status).toBe(404);
    expect((await t.store.queue.stats()).queued).toBe(0);
  });

  test("the cut notice names the time to go on from", async () => {
    const page = "/admin/webhooks/1?notice=replayed-cut&n=1731000000000";
    await ended(t.store);
    expect((await t.client.open(page)).html).toContain(
      "Replay cut at 100,000 deliveries, the oldest first: more matched. Replay again from 2024-11-07T17:20:00.000Z for the rest.",
    );
  });
});
