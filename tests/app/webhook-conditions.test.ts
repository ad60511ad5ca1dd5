import { describe, expect, test } from "bun:test";
import { createClient, testApp, useApp } from "./harness.ts";

const t = useApp();

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

describe("regex conditions bounded by compiled size and count", () => {
  const TOKEN = "regex-bounds-test-token-0123";
  // ((a|b){1,30}){1,30} compiles to 3,661 instructions: two of them in a row are over 5,000.
  const oversize = "((a|b){1,30}){1,30}((a|b){1,30}){1,30}";

  test("POST /api/webhooks refuses an oversize regex and a 17th one with the reason and the path", async () => {
    const admin = testApp({ adminToken: TOKEN });
    const api = createClient(admin.app, { headers: { authorization: `Bearer ${TOKEN}` } });
    const hook = { name: "regex", url: "https://chat.example/hook" };
    const big = {
      and: [
        { attr: "quantity", op: "lt", value: 5 },
        { attr: "name", op: "regex", value: oversize },
      ],
    };
    /** The 400's reasons for a webhook posted with `condition`. */
    const refusal = async (condition: object) => {
      const response = await api.json("POST", "/api/webhooks", { ...hook, condition });
      expect(response.status).toBe(400);
      return ((await response.json()) as { fieldErrors: { condition: string[] } }).fieldErrors
        .condition;
    };
    expect(await refusal(big)).toEqual([
      "At $.and[1].value: the regex compiles to 7,320 instructions: at most 5,000 (nested counted repetitions such as (a{1,30}){1,30} multiply)",
    ]);
    const seventeen = {
      or: Array.from({ length: 17 }, (_, i) => ({ attr: "sku", op: "regex", value: `A-${i}` })),
    };
    expect(await refusal(seventeen)).toEqual([
      "At $.or[16].op: regex condition number 17: a set holds at most 16, nested sets included",
    ]);
    expect(await admin.store.webhooks.list()).toEqual([]);
    admin.store.close();
  });

  test("a stored oversize regex (saved before the cap) makes the change's delivery fail with the reason", async () => {
    // The store checks nothing: this is a row from before the cap.
    const stored = await t.store.webhooks.create({
      name: "old-regex",
      url: "https://chat.example/hook",
      conditions: { and: [{ attr: "name", op: "regex", value: oversize }] },
    });
    const created = await t.client.json("POST", "/api/items", {
      sku: "A-1",
      name: "ab".repeat(50),
      quantity: 1,
    });
    expect(created.status).toBe(201);
    const [failed] = await t.store.queue.list({ webhookId: stored.id });
    // On a loaded machine the renderer may not reach the condition within the change's time:
    // the delivery is then left for the worker to render before the send (nothing sent, no
    // attempt), as tests/worker/render-budgets.test.ts covers; never delivered unchecked.
    if (failed?.renderPending) {
      expect(failed).toMatchObject({ state: "queued", attempts: 0 });
      return;
    }
    expect(failed).toMatchObject({ state: "failed", attempts: 1, payload: "" });
    expect(failed?.lastError).toBe(
      `Condition error: the regex "${oversize}" cannot run: the regex compiles to 7,320 instructions: at most 5,000 (nested counted repetitions such as (a{1,30}){1,30} multiply)`,
    );
  });
});
