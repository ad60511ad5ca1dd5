import { afterEach, beforeEach, expect, test } from "bun:test";
import { testApp } from "./harness.ts";

let t: ReturnType<typeof testApp>;
beforeEach(() => {
  t = testApp();
});
afterEach(() => t.store.close());

test("a webhook with a condition queues only the item changes that match, through the API", async () => {
  const low = await t.store.webhooks.create({
    name: "low-stock",
    url: "https://chat.example/hook",
    conditions: { and: [{ attr: "quantity", op: "lt", value: 5 }] },
    bodyTemplate: '{"text": {{ (data.sku ~ " is low: " ~ data.quantity) | tojson }}}',
  });
  const post = (body: object) => t.client.json("POST", "/api/items", body);
  expect((await post({ sku: "A-1", name: "Bolt", quantity: 100 })).status).toBe(201);
  expect(await t.store.queue.list()).toEqual([]);

  expect((await post({ sku: "A-2", name: "Nut", quantity: 3 })).status).toBe(201);
  const patch = await t.client.json("PATCH", "/api/items/1", { quantity: 4 });
  expect(patch.status).toBe(200);
  const unrelated = await t.client.json("PATCH", "/api/items/1", { name: "Big bolt" });
  expect(unrelated.status).toBe(200);

  const deliveries = (await t.store.queue.list()).reverse();
  expect(deliveries.map((d) => [d.webhookId, d.event, d.payload])).toEqual([
    [low.id, "item.created", '{"text": "A-2 is low: 3"}'],
    [low.id, "item.updated", '{"text": "A-1 is low: 4"}'],
    [low.id, "item.updated", '{"text": "A-1 is low: 4"}'],
  ]);
});
