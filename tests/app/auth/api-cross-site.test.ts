import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { createClient, ORIGIN, testApp } from "../harness.ts";

const ADMIN = "cross-site-test-admin-token-01";
const ITEM = JSON.stringify({ sku: "A-1", name: "Bolt", quantity: 1 });
const JSON_TYPE = { "content-type": "application/json" };

let t: ReturnType<typeof testApp>;
afterEach(() => t.store.close());

describe("open mode (no ADMIN_TOKEN): a write must come from the app's own origin, as JSON", () => {
  beforeEach(() => {
    t = testApp();
  });

  const post = (headers: Record<string, string>, body: string = ITEM) =>
    t.app.request("/api/items", { method: "POST", headers, body });

  test.each([
    [{ ...JSON_TYPE, origin: "http://127.0.0.2:8000" }, 403],
    [{ ...JSON_TYPE, origin: "http://localhost:9999" }, 403],
    [{ ...JSON_TYPE, origin: "null" }, 403],
    [{ ...JSON_TYPE, "sec-fetch-site": "same-site" }, 403],
    [{ ...JSON_TYPE, "sec-fetch-site": "cross-site" }, 403],
    [{ "content-type": "text/plain" }, 415],
    [{ "content-type": "application/x-www-form-urlencoded" }, 415],
    [{}, 415],
    [{ ...JSON_TYPE, origin: ORIGIN, "sec-fetch-site": "same-origin" }, 201],
    [JSON_TYPE, 201],
  ])("%j → %d", async (headers, status) => {
    expect((await post(headers)).status).toBe(status);
    expect(await t.store.items.count()).toBe(status === 201 ? 1 : 0);
  });

  test("the refusal says why, and what a program sends instead", async () => {
    const refused = await post({ ...JSON_TYPE, origin: "http://127.0.0.2:8000" });
    expect(await refused.json()).toEqual({
      error:
        'Cross-site request refused: Origin "http://127.0.0.2:8000" is not this app\'s; a program sends Authorization: Bearer <token>',
    });
    const plain = await post({ "content-type": "text/plain" });
    expect(await plain.json()).toEqual({
      error:
        "Content-Type must be application/json: send a JSON body ({} where nothing else is needed) or Authorization: Bearer <token>",
    });
  });

  test("a write with no body (DELETE, rotate-secret) needs the JSON type too; reads need nothing", async () => {
    const webhook = await t.store.webhooks.create({ name: "h", url: "https://e.example/" });
    const rotate = `/api/webhooks/${webhook.id}/rotate-secret`;
    expect((await t.app.request(rotate, { method: "POST" })).status).toBe(415);
    expect((await t.app.request(`/api/webhooks/${webhook.id}`, { method: "DELETE" })).status).toBe(
      415,
    );
    expect((await t.store.webhooks.get(webhook.id))?.secret).toBe(webhook.secret);
    const rotated = await t.app.request(rotate, { method: "POST", headers: JSON_TYPE, body: "{}" });
    expect(rotated.status).toBe(200);
    const read = await t.app.request("/api/webhooks", {
      headers: { origin: "http://127.0.0.2:8000", "sec-fetch-site": "cross-site" },
    });
    expect(read.status).toBe(200);
  });

  test("behind a proxy that ends TLS, the page's https origin with the app's host is its own", async () => {
    const own = await t.app.request("http://inventory.localhost/api/items", {
      method: "POST",
      headers: { ...JSON_TYPE, origin: "https://inventory.localhost" },
      body: ITEM,
    });
    expect(own.status).toBe(201);
  });
});

describe("with ADMIN_TOKEN", () => {
  beforeEach(() => {
    t = testApp({ adminToken: ADMIN });
  });

  test("a write riding on the login cookie from another origin is refused; from the app's own it passes", async () => {
    const browser = createClient(t.app);
    const login = await browser.submit("/admin/login", { token: ADMIN }, { from: "/admin/login" });
    expect(login.status).toBe(303);
    const foreign = await browser.request("/api/items", {
      method: "POST",
      headers: { ...JSON_TYPE, origin: "http://localhost:9999" },
      body: ITEM,
    });
    expect(foreign.status).toBe(403);
    const formLike = await browser.request("/api/items", {
      method: "POST",
      headers: { "content-type": "text/plain", origin: ORIGIN },
      body: ITEM,
    });
    expect(formLike.status).toBe(415);
    const own = await browser.request("/api/items", {
      method: "POST",
      headers: { ...JSON_TYPE, origin: ORIGIN },
      body: ITEM,
    });
    expect(own.status).toBe(201);
  });

  test("a bearer token needs neither the origin nor the JSON type: no browser adds one by itself", async () => {
    const webhook = await t.store.webhooks.create({ name: "h", url: "https://e.example/" });
    const answer = await t.app.request(`/api/webhooks/${webhook.id}/rotate-secret`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN}`, origin: "http://127.0.0.2:8000" },
    });
    expect(answer.status).toBe(200);
  });
});
