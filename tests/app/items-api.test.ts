import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { T0, testApp } from "./harness.ts";

let t: ReturnType<typeof testApp>;
beforeEach(async () => {
  t = testApp({ bodyLimitBytes: 1024 });
  await t.store.webhooks.create({ name: "all", url: "http://hooks.example/", events: ["*"] });
});
afterEach(() => t.store.close());

const widget = { sku: "W-1", name: "Widget", quantity: 3, location: "Shelf A" };

async function post(body: unknown) {
  return t.client.json("POST", "/api/items", body);
}

async function queuedEvents(): Promise<string[]> {
  return (await t.store.queue.list({})).map((d) => d.event).reverse();
}

describe("POST /api/items", () => {
  test("creates the item, answers 201 with it and queues item.created", async () => {
    const response = await post(widget);
    expect(response.status).toBe(201);
    const item = await response.json();
    expect(item).toEqual({ id: 1, ...widget, updatedAt: T0.toISOString() });
    expect(response.headers.get("location")).toBe("/api/items/1");
    expect(await queuedEvents()).toEqual(["item.created"]);
  });

  test("puts the request id and username in the payload and X-Request-Id", async () => {
    const response = await post(widget);
    const requestId = response.headers.get("x-request-id");
    expect(requestId).toMatch(/^00000000-0000-4000-8000-\d{12}$/);
    const [delivery] = await t.store.queue.list({});
    const payload = JSON.parse(delivery?.payload ?? "{}");
    expect(payload.request_id).toBe(requestId);
    expect(payload.username).toBe("anonymous");
  });

  test("ignores a client's X-Request-Id", async () => {
    const response = await t.client.json("POST", "/api/items", widget, {
      "x-request-id": "forged",
    });
    expect(response.headers.get("x-request-id")).not.toBe("forged");
  });

  test("answers 400 with the field errors and writes nothing", async () => {
    const response = await post({ sku: "", name: "x", quantity: -1, id: 9 });
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.fieldErrors.sku).toEqual(["Required"]);
    expect(body.fieldErrors.quantity).toEqual(["Must be 0 or more"]);
    expect(body.formErrors[0]).toMatch(/Unrecognized key.*"id"/);
    expect(await t.store.items.count()).toBe(0);
    expect(await queuedEvents()).toEqual([]);
  });

  test("answers 400 for a quantity that is not a whole number", async () => {
    const response = await post({ ...widget, quantity: 1.5 });
    expect((await response.json()).fieldErrors.quantity).toEqual(["Must be a whole number"]);
  });

  test("answers 400 for malformed JSON", async () => {
    const response = await t.client.request("/api/items", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{nope",
    });
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatch(/^Invalid JSON/);
  });

  test("answers 409 for a duplicate sku and queues nothing more", async () => {
    await post(widget);
    const response = await post({ ...widget, name: "Other" });
    expect(response.status).toBe(409);
    expect((await response.json()).fieldErrors).toEqual({ sku: ["Already taken"] });
    expect(await queuedEvents()).toEqual(["item.created"]);
  });

  test("answers 413 for a body over the limit", async () => {
    const response = await post({ ...widget, name: "x".repeat(2000) });
    expect(response.status).toBe(413);
    expect((await response.json()).error).toMatch(/too large/);
    expect(await t.store.items.count()).toBe(0);
  });

  test("answers 413 for a chunked body over the limit", async () => {
    const chunks = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 4; i++) controller.enqueue(new TextEncoder().encode("x".repeat(500)));
        controller.close();
      },
    });
    const response = await t.client.request("/api/items", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: chunks,
    });
    expect(response.status).toBe(413);
  });

  test("answers 415 when the body is not JSON", async () => {
    for (const type of ["text/plain", "application/x-www-form-urlencoded", ""]) {
      const response = await t.client.request("/api/items", {
        method: "POST",
        headers: type ? { "content-type": type } : {},
        body: JSON.stringify(widget),
      });
      expect(response.status).toBe(415);
    }
    expect(await t.store.items.count()).toBe(0);
  });

  test("accepts application/json with a charset", async () => {
    const response = await t.client.request("/api/items", {
      method: "POST",
      headers: { "content-type": "application/json; charset=utf-8" },
      body: JSON.stringify(widget),
    });
    expect(response.status).toBe(201);
  });
});

describe("GET /api/items", () => {
  test("lists newest first with total, limit and offset", async () => {
    for (const sku of ["A", "B", "C"]) await post({ ...widget, sku });
    const response = await t.client.request("/api/items?limit=2&offset=1");
    const body = await response.json();
    expect(body.items.map((i: { sku: string }) => i.sku)).toEqual(["B", "A"]);
    expect(body).toMatchObject({ total: 3, limit: 2, offset: 1 });
  });

  test("answers 400 for a bad limit", async () => {
    expect((await t.client.request("/api/items?limit=0")).status).toBe(400);
    expect((await t.client.request("/api/items?limit=abc")).status).toBe(400);
  });
});

describe("GET /api/items/:id", () => {
  test("returns the item, 404 for an unknown or malformed id", async () => {
    await post(widget);
    expect((await (await t.client.request("/api/items/1")).json()).sku).toBe("W-1");
    for (const path of ["/api/items/2", "/api/items/abc", "/api/items/0", "/api/items/1e3"]) {
      const response = await t.client.request(path);
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ error: "Item not found" });
    }
  });
});

describe("PATCH /api/items/:id", () => {
  test("updates, answers with the item and queues item.updated with snapshots", async () => {
    await post(widget);
    t.clock.now = new Date("2025-03-04T06:00:00.000Z");
    const response = await t.client.json("PATCH", "/api/items/1", { quantity: 9 });
    expect(response.status).toBe(200);
    const item = await response.json();
    expect(item).toMatchObject({ quantity: 9, updatedAt: "2025-03-04T06:00:00.000Z" });
    expect(await queuedEvents()).toEqual(["item.created", "item.updated"]);
    const [latest] = await t.store.queue.list({ limit: 1 });
    const payload = JSON.parse(latest?.payload ?? "{}");
    expect(payload.snapshots.prechange.quantity).toBe(3);
    expect(payload.snapshots.postchange).toEqual(item);
  });

  test("queues nothing when nothing changed", async () => {
    await post(widget);
    const response = await t.client.json("PATCH", "/api/items/1", { quantity: 3, sku: "W-1" });
    expect(response.status).toBe(200);
    expect(await queuedEvents()).toEqual(["item.created"]);
  });

  test("answers 400, 404, 409 and 415 as POST does", async () => {
    await post(widget);
    await post({ ...widget, sku: "W-2" });
    expect((await t.client.json("PATCH", "/api/items/1", { quantity: "x" })).status).toBe(400);
    expect((await t.client.json("PATCH", "/api/items/1", { color: "red" })).status).toBe(400);
    expect((await t.client.json("PATCH", "/api/items/99", { quantity: 1 })).status).toBe(404);
    expect((await t.client.json("PATCH", "/api/items/2", { sku: "W-1" })).status).toBe(409);
    const text = await t.client.request("/api/items/1", { method: "PATCH", body: "{}" });
    expect(text.status).toBe(415);
    expect(await queuedEvents()).toEqual(["item.created", "item.created"]);
  });
});

describe("DELETE /api/items/:id", () => {
  test("deletes, answers 204 and queues item.deleted; 404 the second time", async () => {
    await post(widget);
    expect((await t.client.json("DELETE", "/api/items/1", {})).status).toBe(204);
    expect((await t.client.json("DELETE", "/api/items/1", {})).status).toBe(404);
    expect(await queuedEvents()).toEqual(["item.created", "item.deleted"]);
  });
});

test("an unknown API path answers 404 JSON", async () => {
  const response = await t.client.request("/api/nothing");
  expect(response.status).toBe(404);
  expect(await response.json()).toEqual({ error: "Not found" });
});
