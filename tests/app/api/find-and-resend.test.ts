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
