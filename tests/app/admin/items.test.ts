import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { testApp } from "../harness.ts";

let t: ReturnType<typeof testApp>;
beforeEach(async () => {
  t = testApp();
  await t.store.webhooks.create({ name: "all", url: "http://h.example/", events: ["*"] });
});
afterEach(() => t.store.close());

const fields = { sku: "W-1", name: "Widget", quantity: "3", location: "Shelf A" };

async function events(): Promise<string[]> {
  return (await t.store.queue.list({})).map((d) => d.event).reverse();
}

describe("Items pages", () => {
  test("creating an item queues item.created and says so", async () => {
    const response = await t.client.submit("/admin/items", fields);
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe("/admin/items?notice=item-created&n=1");
    expect(await events()).toEqual(["item.created"]);
    const { html } = await t.client.open("/admin/items?notice=item-created&n=1");
    expect(html).toContain("Item created; 1 webhook delivery queued.");
    expect(html).toContain(">W-1</a>");
  });

  test("editing an item queues item.updated; saving it unchanged queues nothing", async () => {
    await t.client.submit("/admin/items", fields);
    const edit = await t.client.open("/admin/items/1");
    expect(edit.html).toContain('value="Shelf A"');
    const unchanged = await t.client.submit("/admin/items/1", fields, { csrf: edit.csrf });
    expect(unchanged.headers.get("location")).toBe("/admin/items?notice=item-unchanged");
    const changed = await t.client.submit(
      "/admin/items/1",
      { ...fields, quantity: "4" },
      { csrf: edit.csrf },
    );
    expect(changed.headers.get("location")).toBe("/admin/items?notice=item-updated&n=1");
    expect((await t.store.items.get(1))?.quantity).toBe(4);
    expect(await events()).toEqual(["item.created", "item.updated"]);
  });

  test("a bad form answers 400 with the errors and the typed values", async () => {
    const response = await t.client.submit("/admin/items", { ...fields, sku: " ", quantity: "-2" });
    expect(response.status).toBe(400);
    const html = await response.text();
    expect(html).toContain("Must be a whole number, 0 or more");
    expect(html).toContain('value="-2"');
    expect(await t.store.items.count()).toBe(0);
  });

  test("a duplicate sku answers 409 on the form", async () => {
    await t.client.submit("/admin/items", fields);
    const response = await t.client.submit("/admin/items", fields);
    expect(response.status).toBe(409);
    expect(await response.text()).toContain("Another item has this SKU");
  });

  test("deleting an item queues item.deleted", async () => {
    await t.client.submit("/admin/items", fields);
    const response = await t.client.submit("/admin/items/1/delete", {});
    expect(response.headers.get("location")).toBe("/admin/items?notice=item-deleted&n=1");
    expect(await t.store.items.get(1)).toBeNull();
    expect(await events()).toEqual(["item.created", "item.deleted"]);
  });

  test("the list pages newest first, 25 a page", async () => {
    for (let n = 1; n <= 30; n++) {
      await t.store.items.create(
        { sku: `S-${n}`, name: "x", quantity: 1, location: "" },
        new Date(),
      );
    }
    const first = await t.client.open("/admin/items");
    expect(first.html).toContain(">S-30</a>");
    expect(first.html).not.toContain(">S-5</a>");
    expect(first.html).toContain("Page 1 of 2 (30 items)");
    const second = await t.client.open("/admin/items?page=2");
    expect(second.html).toContain(">S-5</a>");
    expect(second.html).not.toContain(">S-6</a>");
  });

  test("an unknown item answers 404", async () => {
    expect((await t.client.request("/admin/items/5")).status).toBe(404);
    expect((await t.client.submit("/admin/items/5/delete", {})).status).toBe(404);
  });
});
