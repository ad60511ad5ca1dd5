import { describe, expect, test } from "bun:test";
import { change } from "../fakes/change.ts";
import { record } from "../store/contract.ts";
import { testApp, useTokenApp, webhookForm } from "./harness.ts";

const TOKEN = "url-password-test-token-0123";
const STORED = "https://user:s3cret-pw@hook.example/in/{{ data.id }}";
const MASKED = "https://user:***@hook.example/in/{{ data.id }}";

const ctx = useTokenApp(TOKEN);

function openAdmin() {
  const admin = testApp();
  return Object.assign(admin, { [Symbol.dispose]: () => admin.store.close() });
}

/** A delivery to the stored URL, rendered, with one failed attempt that quotes it. */
async function deliveredOnce(app = ctx.t): Promise<number> {
  await app.store.queue.enqueue(change());
  const now = app.clock.now.getTime();
  const [claim] = await app.store.queue.claim({ workerId: "w", limit: 1, leaseMs: 1000, now });
  if (!claim) throw new Error("nothing to claim");
  await app.store.queue.finish(
    claim,
    record({
      statusCode: null,
      outcome: "network_error",
      url: claim.delivery.url ?? undefined,
      error: `fetch ${claim.delivery.url} failed`,
    }),
    { state: "failed" },
  );
  return claim.delivery.id;
}

describe("a webhook URL's password is masked, stored and sent unchanged", () => {
  test("the management API: POST, GET one, GET the list and PATCH answer ***", async () => {
    const created = await ctx.api.json("POST", "/api/webhooks", { name: "erp", url: STORED });
    expect(created.status).toBe(201);
    const { id, url } = (await created.json()) as { id: number; url: string };
    expect(url).toBe(MASKED);
    for (const path of [`/api/webhooks/${id}`, "/api/webhooks"]) {
      const text = await (await ctx.api.request(path)).text();
      expect(text).toContain(JSON.stringify(MASKED));
      expect(text).not.toContain("s3cret-pw");
    }
    const patched = await ctx.api.json("PATCH", `/api/webhooks/${id}`, { method: "PUT" });
    expect(((await patched.json()) as { url: string }).url).toBe(MASKED);
    expect((await ctx.t.store.webhooks.get(id))?.url).toBe(STORED);
  });

  test("a PATCH sending back the masked URL keeps the password; another host does not get it", async () => {
    const webhook = await ctx.t.store.webhooks.create({ name: "erp", url: STORED });
    const got = (await (await ctx.api.request(`/api/webhooks/${webhook.id}`)).json()) as {
      url: string;
    };
    const moved = got.url.replace("/in/", "/v2/");
    const same = await ctx.api.json("PATCH", `/api/webhooks/${webhook.id}`, { url: moved });
    expect(same.status).toBe(200);
    expect((await ctx.t.store.webhooks.get(webhook.id))?.url).toBe(
      "https://user:s3cret-pw@hook.example/v2/{{ data.id }}",
    );
    const elsewhere = "https://user:***@collector.example/";
    await ctx.api.json("PATCH", `/api/webhooks/${webhook.id}`, { url: elsewhere });
    expect((await ctx.t.store.webhooks.get(webhook.id))?.url).toBe(elsewhere);
  });

  test("the deliveries API masks the delivery's URL, its attempts' URLs and errors", async () => {
    await ctx.t.store.webhooks.create({ name: "erp", url: STORED });
    const id = await deliveredOnce();
    const text = await (await ctx.api.request(`/api/deliveries/${id}`)).text();
    expect(text).toContain('"url":"https://user:***@hook.example/in/1"');
    expect(text).toContain("fetch https://user:***@hook.example/in/1 failed");
    expect(text).not.toContain("s3cret-pw");
    const list = await (await ctx.api.request("/api/deliveries")).text();
    expect(list).toContain('"url":"https://user:***@hook.example/in/1"');
    expect(list).not.toContain("s3cret-pw");
  });

  test("the admin: the webhook list, its page (the form) and Background Tasks show ***", async () => {
    // The admin without a token to log in with: the pages answer directly.
    using admin = openAdmin();
    const webhook = await admin.store.webhooks.create({ name: "erp", url: STORED });
    const id = await deliveredOnce(admin);
    const browser = admin.client;
    const pages = {
      list: "/admin/webhooks",
      page: `/admin/webhooks/${webhook.id}`,
      deliveries: "/admin/background-tasks/deliveries",
      delivery: `/admin/background-tasks/deliveries/${id}`,
    };
    for (const [name, page] of Object.entries(pages)) {
      const { response, html } = await browser.open(page);
      expect({ name, status: response.status }).toEqual({ name, status: 200 });
      expect({ name, leaked: html.includes("s3cret-pw") }).toEqual({ name, leaked: false });
    }
    expect((await browser.open(pages.list)).html).toContain(MASKED);
    expect((await browser.open(pages.page)).html).toContain(`value="${MASKED}"`);
    const delivery = (await browser.open(pages.delivery)).html;
    expect(delivery).toContain("<code>https://user:***@hook.example/in/1</code>");
    expect(delivery).toContain("fetch https://user:***@hook.example/in/1 failed");
  });

  test("the admin form saved with the masked URL as shown keeps the stored password", async () => {
    using admin = openAdmin();
    const webhook = await admin.store.webhooks.create({ name: "erp", url: STORED });
    const browser = admin.client;
    const page = `/admin/webhooks/${webhook.id}`;
    const saved = await browser.submit(page, webhookForm({ name: "erp", url: MASKED }), {
      from: page,
    });
    expect(saved.status).toBe(303);
    expect((await admin.store.webhooks.get(webhook.id))?.url).toBe(STORED);
    await browser.submit(
      page,
      webhookForm({ name: "erp", url: "https://user:new-pw@hook.example/" }),
      {
        from: page,
      },
    );
    expect((await admin.store.webhooks.get(webhook.id))?.url).toBe(
      "https://user:new-pw@hook.example/",
    );
  });
});
