import { describe, expect, test } from "bun:test";
import { useApp, webhookForm } from "../harness.ts";

const t = useApp();

const form = webhookForm({
  headers: "X-Env: test\nAuthorization: Bearer abc",
  events: ["item.created", "item.updated"],
});

async function create(fields: Record<string, string | string[]> = form) {
  return t.client.submit("/admin/webhooks", fields, { from: "/admin/webhooks/new" });
}

describe("creating a webhook", () => {
  test("stores it and shows the generated secret once, never again", async () => {
    const response = await create();
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const html = await response.text();
    const secret = html.match(/id="generated-secret">([^<]+)</)?.[1];
    expect(secret).toStartWith("whsec_");
    const [webhook] = await t.store.webhooks.list();
    expect(webhook).toMatchObject({
      name: "receiver",
      url: "http://127.0.0.1:9000/hook",
      headers: [
        ["X-Env", "test"],
        ["Authorization", "Bearer abc"],
      ],
      events: ["item.created", "item.updated"],
      enabled: true,
      secret,
    });
    for (const page of ["/admin/webhooks", `/admin/webhooks/${webhook?.id}`]) {
      const { html: later } = await t.client.open(page);
      expect(later).not.toContain(secret ?? "missing");
    }
  });

  test("keeps a secret typed in and does not show it", async () => {
    const secret = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
    const html = await (await create({ ...form, secret })).text();
    expect(html).not.toContain(secret);
    expect((await t.store.webhooks.list())[0]?.secret).toBe(secret);
  });

  test("choosing all events stores only *", async () => {
    await create({ ...form, events: ["*", "item.deleted"] });
    expect((await t.store.webhooks.list())[0]?.events).toEqual(["*"]);
  });

  test("answers 400 with each field's error and the typed values, creating nothing", async () => {
    const response = await create({
      ...form,
      name: "",
      url: "ftp://x",
      headers: "no colon here",
      events: [],
      secret: "plain",
      maxPerSecond: "-3",
    });
    expect(response.status).toBe(400);
    const html = await response.text();
    expect(html).toContain("Must be an http:// or https:// URL");
    expect(html).toContain("Line 1: expected Name: Value");
    expect(html).toContain("Choose at least one event");
    expect(html).toContain("Must be whsec_");
    expect(html).toContain("Must be a number above 0");
    expect(html).toContain('value="ftp://x"');
    expect(await t.store.webhooks.list()).toEqual([]);
  });

  test("stores max deliveries per second, shows it on the edit page, and clears it when emptied", async () => {
    await create({ ...form, maxPerSecond: "2.5" });
    const [webhook] = await t.store.webhooks.list();
    expect(webhook?.maxPerSecond).toBe(2.5);
    const page = `/admin/webhooks/${webhook?.id}`;
    expect((await t.client.open(page)).html).toContain('name="maxPerSecond" value="2.5"');
    await t.client.submit(page, { ...form, maxPerSecond: "" }, { from: page });
    expect((await t.store.webhooks.get(webhook?.id ?? 0))?.maxPerSecond).toBeNull();
  });

  test("refuses headers the sender sets itself", async () => {
    const response = await create({ ...form, headers: "webhook-signature: v1,forged" });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain("is set by the sender");
  });

  test("answers 409 for a name already taken", async () => {
    await create();
    const response = await create();
    expect(response.status).toBe(409);
    expect(await response.text()).toContain("Another webhook has this name");
  });
});

describe("editing a webhook", () => {
  test("leaves the secret unchanged when the field is empty", async () => {
    await create();
    const [before] = await t.store.webhooks.list();
    const response = await t.client.submit(`/admin/webhooks/${before?.id}`, {
      ...form,
      url: "https://hooks.example/v2",
    });
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe("/admin/webhooks?notice=webhook-updated");
    const after = await t.store.webhooks.get(before?.id ?? 0);
    expect(after?.url).toBe("https://hooks.example/v2");
    expect(after?.secret).toBe(before?.secret ?? "missing");
  });

  test("replaces or removes the secret when asked", async () => {
    await create();
    const [webhook] = await t.store.webhooks.list();
    const id = webhook?.id ?? 0;
    const replacement = `whsec_${Buffer.alloc(24, 9).toString("base64")}`;
    await t.client.submit(`/admin/webhooks/${id}`, { ...form, secret: replacement });
    expect((await t.store.webhooks.get(id))?.secret).toBe(replacement);
    await t.client.submit(`/admin/webhooks/${id}`, { ...form, removeSecret: "on" });
    expect((await t.store.webhooks.get(id))?.secret).toBeNull();
  });

  test("unchecking Enabled disables it with a reason naming the user", async () => {
    await create();
    const [webhook] = await t.store.webhooks.list();
    const { enabled: _, ...disabled } = form;
    await t.client.submit(`/admin/webhooks/${webhook?.id}`, disabled);
    const after = await t.store.webhooks.get(webhook?.id ?? 0);
    expect(after?.enabled).toBe(false);
    expect(after?.disabledReason).toBe("Disabled in the admin by anonymous");
  });

  test("answers 404 for an unknown webhook", async () => {
    expect((await t.client.request("/admin/webhooks/77")).status).toBe(404);
    expect((await t.client.submit("/admin/webhooks/77", form)).status).toBe(404);
  });
});

describe("webhook actions", () => {
  test("Disable and Enable switch it and the list shows the state", async () => {
    await create();
    const [webhook] = await t.store.webhooks.list();
    const id = webhook?.id ?? 0;
    await t.client.submit(`/admin/webhooks/${id}/disable`, {}, { from: "/admin/webhooks" });
    expect((await t.store.webhooks.get(id))?.enabled).toBe(false);
    const { html } = await t.client.open("/admin/webhooks");
    expect(html).toContain('<span class="badge disabled">disabled</span>');
    expect(html).toContain(`action="/admin/webhooks/${id}/enable"`);
    await t.client.submit(`/admin/webhooks/${id}/enable`, {}, { from: "/admin/webhooks" });
    expect((await t.store.webhooks.get(id))?.enabled).toBe(true);
  });

  test("Send test queues a ping for that webhook only and opens its delivery", async () => {
    await create();
    await create({ ...form, name: "second" });
    const [first] = await t.store.webhooks.list();
    const response = await t.client.submit(`/admin/webhooks/${first?.id}/test`, {});
    const deliveries = await t.store.queue.list({});
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({ event: "ping", webhookId: first?.id });
    expect(response.headers.get("location")).toBe(
      `/admin/background-tasks/deliveries/${deliveries[0]?.id}?notice=test-queued&n=${deliveries[0]?.id}`,
    );
    expect(JSON.parse(deliveries[0]?.payload ?? "{}")).toMatchObject({
      event: "ping",
      model: "webhook",
    });
  });

  test("Send test to a disabled webhook queues nothing and says why", async () => {
    await create({ ...form, enabled: "" });
    const [webhook] = await t.store.webhooks.list();
    const response = await t.client.submit(`/admin/webhooks/${webhook?.id}/test`, {});
    expect(response.headers.get("location")).toContain("notice=test-not-queued");
    expect(await t.store.queue.list({})).toEqual([]);
  });

  test("Delete removes the webhook", async () => {
    await create();
    const [webhook] = await t.store.webhooks.list();
    const response = await t.client.submit(`/admin/webhooks/${webhook?.id}/delete`, {});
    expect(response.headers.get("location")).toBe("/admin/webhooks?notice=webhook-deleted");
    expect(await t.store.webhooks.list()).toEqual([]);
  });
});

describe("endpoint health on the Webhooks pages", () => {
  const reason = "Disabled automatically: the endpoint answered 410 Gone";

  test("an automatically disabled webhook shows why and since when, in the list and on its page", async () => {
    await create();
    const [webhook] = await t.store.webhooks.list();
    const id = webhook?.id ?? 0;
    await t.store.health.disable(id, { reason, now: Date.UTC(2025, 2, 4, 5, 0, 0) });
    const list = (await t.client.open("/admin/webhooks")).html;
    expect(list).toContain(`${reason} (2025-03-04 05:00:00 UTC)`);
    const page = (await t.client.open(`/admin/webhooks/${id}`)).html;
    expect(page).toContain(`<strong>Disabled</strong> since 2025-03-04 05:00:00 UTC: ${reason}.`);
    expect(page).toContain(`action="/admin/webhooks/${id}/enable"`);
  });

  test("a failing webhook shows since when every attempt failed", async () => {
    await create();
    const [webhook] = await t.store.webhooks.list();
    await t.store.health.recordFailure(webhook?.id ?? 0, {
      now: Date.UTC(2025, 2, 4, 4, 0, 0),
      deliveryFailed: true,
    });
    const list = (await t.client.open("/admin/webhooks")).html;
    expect(list).toContain("Every attempt failed since 2025-03-04 04:00:00 UTC");
  });

  test("Enable resumes it: the streak and pause are cleared and its waiting deliveries are claimable", async () => {
    await create();
    const [webhook] = await t.store.webhooks.list();
    const id = webhook?.id ?? 0;
    const [waiting] = await t.store.queue.enqueue({
      event: "item.created",
      model: "item",
      username: "alice",
      requestId: "req-1",
      data: { id: 1 },
      prechange: null,
      postchange: { id: 1 },
      timestamp: new Date(),
    });
    const now = t.clock.now.getTime();
    await t.store.health.recordFailure(id, { now, deliveryFailed: true });
    await t.store.health.pause(id, now + 3_600_000);
    await t.store.health.disable(id, { reason, now });
    const claim = () => t.store.queue.claim({ workerId: "w", limit: 5, leaseMs: 60_000, now });
    expect(await claim()).toEqual([]);

    await t.client.submit(`/admin/webhooks/${id}/enable`, {}, { from: `/admin/webhooks/${id}` });
    expect(await t.store.webhooks.get(id)).toMatchObject({
      enabled: true,
      disabledReason: null,
      failingSince: null,
    });
    const claims = await claim();
    expect(claims.map((c) => c.delivery.id)).toEqual([waiting ?? -1]);
    expect(claims[0]?.notBefore).toBeUndefined();
  });
});
