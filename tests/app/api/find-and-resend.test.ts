import { describe, expect, test } from "bun:test";
import { change } from "../../fakes/change.ts";
import { appWorker } from "../../fakes/test-worker.ts";
import { useFakeEndpoint } from "../../fakes/webhook-endpoint.ts";
import { useTokenApp } from "../harness.ts";

const TOKEN = "find-and-resend-test-token-01";
const HOUR = 3_600_000;

const ctx = useTokenApp(TOKEN);
const endpoint = useFakeEndpoint();

/** A real worker on the app's store and clock, sending to the fake endpoint over HTTP. */
function send() {
  return appWorker(ctx.t, { config: { retryBaseMs: 10_000, retryMaxMs: HOUR } }).runOnce();
}

/** Two webhooks to the endpoint, three changes sent: six requests received. */
async function sentSix() {
  for (const name of ["erp", "crm"]) {
    await ctx.t.store.webhooks.create({ name, url: `${endpoint.url}/${name}`, secret: null });
  }
  for (const id of [1, 2, 3])
    await ctx.t.store.queue.enqueue(change({ data: { id, name: `i${id}` } }));
  await send();
  expect(endpoint.requests).toHaveLength(6);
}

interface Listed {
  deliveries: Array<{ id: number; message_id: string; webhook_name: string; object_id: number }>;
  total: number;
}

describe("find a delivery by the webhook-id a receiver logged", () => {
  test("GET /api/deliveries?message_id= answers the one delivery that sent it", async () => {
    await sentSix();
    const received = endpoint.requests[4];
    const messageId = received?.headers["webhook-id"] ?? "";
    expect(messageId).toMatch(/^msg_/);
    const response = await ctx.api.request(
      `/api/deliveries?message_id=${encodeURIComponent(messageId)}`,
    );
    expect(response.status).toBe(200);
    const page = (await response.json()) as Listed;
    expect(page.total).toBe(1);
    expect(page.deliveries[0]?.message_id).toBe(messageId);
    expect(`/${page.deliveries[0]?.webhook_name}`).toBe(received?.path ?? "");
    // With other filters, all must hold; an unknown id finds nothing.
    const other = page.deliveries[0]?.webhook_name === "erp" ? 2 : 1;
    const narrowed = (await (
      await ctx.api.request(`/api/deliveries?message_id=${messageId}&webhook=${other}`)
    ).json()) as Listed;
    expect(narrowed.total).toBe(0);
    const unknown = (await (
      await ctx.api.request("/api/deliveries?message_id=msg_nothing")
    ).json()) as Listed;
    expect(unknown).toMatchObject({ total: 0, deliveries: [] });
  });

  test("the object filters narrow the listing to one object's deliveries", async () => {
    await sentSix();
    const page = (await (
      await ctx.api.request("/api/deliveries?object_model=item&object_id=2")
    ).json()) as Listed;
    expect(page.total).toBe(2);
    expect(page.deliveries.map((d) => d.object_id)).toEqual([2, 2]);
  });

  test("the admin's search box on Background Tasks finds it", async () => {
    await sentSix();
    const messageId = endpoint.requests[1]?.headers["webhook-id"] ?? "";
    const overview = await ctx.api.request("/admin/background-tasks");
    expect(await overview.text()).toContain('name="message_id"');
    const found = await ctx.api.request(
      `/admin/background-tasks/deliveries?message_id=${encodeURIComponent(messageId)}`,
    );
    const html = await found.text();
    expect(found.status).toBe(200);
    expect(html).toContain(`with webhook-id ${messageId}`);
    expect(html.match(/id="delivery-\d+"/g)).toHaveLength(1);
    const none = await ctx.api.request("/admin/background-tasks/deliveries?message_id=msg_nothing");
    expect(await none.text()).toContain("None.");
  });
});

interface Requeued {
  replayed?: number;
  retried?: number;
  matched: number;
  skipped: Array<{ id: number; reason: string }>;
  message: string;
}

describe("resend one message by id", () => {
  test("POST /api/deliveries/replay {ids}: the same bytes and webhook-id, received again as a new attempt", async () => {
    await sentSix();
    const first = endpoint.requests[3];
    const messageId = first?.headers["webhook-id"] ?? "";
    const page = (await (
      await ctx.api.request(`/api/deliveries?message_id=${messageId}`)
    ).json()) as Listed;
    const id = page.deliveries[0]?.id ?? 0;
    const response = await ctx.api.json("POST", "/api/deliveries/replay", { ids: [id] });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      replayed: 1,
      matched: 1,
      skipped: [],
      message: "Replayed 1 of 1 delivery",
    });
    ctx.t.clock.now = new Date(ctx.t.clock.now.getTime() + 1000);
    await send();
    expect(endpoint.requests).toHaveLength(7);
    const again = endpoint.requests[6];
    expect(again?.headers["webhook-id"]).toBe(messageId);
    expect(again?.path).toBe(first?.path ?? "");
    expect(Buffer.from(again?.body ?? "").equals(Buffer.from(first?.body ?? "x"))).toBe(true);
    const detail = (await (await ctx.api.request(`/api/deliveries/${id}`)).json()) as {
      state: string;
      attempts: Array<{ number: number; outcome: string }>;
    };
    expect(detail.state).toBe("successful");
    expect(detail.attempts.map((a) => [a.number, a.outcome])).toEqual([
      [1, "success"],
      [2, "success"],
    ]);
  });

  test("retry and replay by ids say why of each id left: unknown, not failed, already queued, in flight", async () => {
    await sentSix();
    const listed = (await (await ctx.api.request("/api/deliveries?limit=10")).json()) as Listed;
    const sent = listed.deliveries[0]?.id ?? 0;
    await ctx.t.store.queue.enqueue(change({ data: { id: 4, name: "i4" } }));
    const queuedPage = (await (
      await ctx.api.request("/api/deliveries?state=queued")
    ).json()) as Listed;
    const [waiting = 0, inFlight = 0] = queuedPage.deliveries.map((d) => d.id);
    await ctx.t.store.queue.claim({
      workerId: "w",
      limit: 1,
      leaseMs: 60_000,
      now: ctx.t.clock.now.getTime(),
    });
    const delivering = (await (
      await ctx.api.request("/api/deliveries?state=delivering")
    ).json()) as Listed;
    const busy = delivering.deliveries[0]?.id ?? 0;
    const queued = busy === waiting ? inFlight : waiting;
    const retried = (await (
      await ctx.api.json("POST", "/api/deliveries/retry", { ids: [sent, 999, queued, busy] })
    ).json()) as Requeued;
    expect(retried).toMatchObject({ retried: 0, matched: 4 });
    expect(retried.skipped).toEqual([
      { id: sent, reason: "not failed" },
      { id: 999, reason: "unknown" },
      { id: queued, reason: "already queued" },
      { id: busy, reason: "in flight" },
    ]);
    expect(retried.message).toBe(
      `Retried 0 of 4 deliveries; not retried: ${sent} (not failed), 999 (unknown), ${queued} (already queued), ${busy} (in flight)`,
    );
    const replayed = (await (
      await ctx.api.json("POST", "/api/deliveries/replay", { ids: [sent, 999, queued, busy] })
    ).json()) as Requeued;
    expect(replayed).toMatchObject({ replayed: 1, matched: 4 });
    expect(replayed.skipped.map((s) => s.reason)).toEqual([
      "unknown",
      "already queued",
      "in flight",
    ]);
    const both = await ctx.api.json("POST", "/api/deliveries/replay", { ids: [sent], webhook: 1 });
    expect(both.status).toBe(400);
  });
});
