import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { DuplicateSkuError } from "../../../lib/inventory/model.ts";
import { openSqliteStore } from "../../../lib/store/sqlite/store.ts";
import {
  type ChangeContext,
  changedFields,
  createItem,
  deleteItem,
  updateItem,
} from "../../../lib/webhooks/events/item-changes.ts";
import type { Store } from "../../../lib/webhooks/ports.ts";

const T0 = new Date("2025-03-04T05:06:07.000Z");
const T1 = new Date("2025-03-04T05:07:00.000Z");
const widget = { sku: "W-1", name: "Widget", quantity: 3, location: "Shelf A" };
const ctx = (now = T0): ChangeContext => ({ username: "alice", requestId: "req-1", now });

let store: Store;
beforeEach(async () => {
  store = openSqliteStore(":memory:");
  await store.webhooks.create({ name: "all", url: "http://hooks.example/all", events: ["*"] });
  await store.webhooks.create({
    name: "updates",
    url: "http://hooks.example/u",
    events: ["item.updated"],
  });
});
afterEach(() => store.close());

async function payloads() {
  const deliveries = await store.queue.list({});
  return deliveries
    .reverse()
    .map((d) => ({ webhook: d.webhookName, event: d.event, body: JSON.parse(d.payload) }));
}

describe("createItem()", () => {
  test("writes the item and queues item.created for each subscribed webhook", async () => {
    const { item, deliveryIds } = await createItem(store, widget, ctx());
    expect(await store.items.get(item.id)).toEqual(item);
    expect(deliveryIds).toHaveLength(1);
    const [only] = await payloads();
    expect(only?.webhook).toBe("all");
    expect(only?.event).toBe("item.created");
    expect(only?.body).toMatchObject({
      event: "created",
      model: "item",
      username: "alice",
      request_id: "req-1",
      data: item,
      snapshots: { prechange: null, postchange: item },
    });
  });

  test("a duplicate sku throws and queues nothing", async () => {
    await createItem(store, widget, ctx());
    await expect(createItem(store, { ...widget, name: "Other" }, ctx())).rejects.toBeInstanceOf(
      DuplicateSkuError,
    );
    expect(await store.items.count()).toBe(1);
    expect(await payloads()).toHaveLength(1);
  });

  test("a failing enqueue rolls the item back", async () => {
    const failingQueue: Store = {
      ...store,
      transaction: (fn) =>
        store.transaction((tx) =>
          fn({
            ...tx,
            queue: {
              ...tx.queue,
              enqueue: async () => {
                throw new Error("disk full");
              },
            },
          }),
        ),
    };
    await expect(createItem(failingQueue, widget, ctx())).rejects.toThrow("disk full");
    expect(await store.items.count()).toBe(0);
  });
});

describe("updateItem()", () => {
  test("queues item.updated with prechange and postchange snapshots", async () => {
    const { item } = await createItem(store, widget, ctx());
    const result = await updateItem(store, item.id, { quantity: 5 }, ctx(T1));
    expect(result?.changed).toBe(true);
    expect(result?.item).toEqual({ ...item, quantity: 5, updatedAt: T1.toISOString() });
    const updates = (await payloads()).filter((p) => p.event === "item.updated");
    expect(updates.map((p) => p.webhook).sort()).toEqual(["all", "updates"]);
    expect(updates[0]?.body.snapshots).toEqual({ prechange: item, postchange: result?.item });
  });

  test("changes nothing and queues nothing when every field already has that value", async () => {
    const { item } = await createItem(store, widget, ctx());
    const result = await updateItem(store, item.id, { quantity: 3, name: "Widget" }, ctx(T1));
    expect(result).toEqual({ item, changed: false, deliveryIds: [] });
    expect((await store.items.get(item.id))?.updatedAt).toBe(T0.toISOString());
    expect((await payloads()).map((p) => p.event)).toEqual(["item.created"]);
  });

  test("returns null for an unknown id and queues nothing", async () => {
    expect(await updateItem(store, 404, { quantity: 1 }, ctx())).toBeNull();
    expect(await payloads()).toEqual([]);
  });

  test("taking another item's sku throws DuplicateSkuError and queues nothing", async () => {
    await createItem(store, widget, ctx());
    const { item } = await createItem(store, { ...widget, sku: "W-2" }, ctx());
    await expect(updateItem(store, item.id, { sku: "W-1" }, ctx())).rejects.toBeInstanceOf(
      DuplicateSkuError,
    );
    expect((await payloads()).map((p) => p.event)).toEqual(["item.created", "item.created"]);
  });
});

describe("deleteItem()", () => {
  test("removes the item and queues item.deleted with the last state as prechange", async () => {
    const { item } = await createItem(store, widget, ctx());
    const result = await deleteItem(store, item.id, ctx(T1));
    expect(result?.item).toEqual(item);
    expect(await store.items.get(item.id)).toBeNull();
    const deleted = (await payloads()).find((p) => p.event === "item.deleted");
    expect(deleted?.body.snapshots).toEqual({ prechange: item, postchange: null });
  });

  test("returns null for an unknown id", async () => {
    expect(await deleteItem(store, 404, ctx())).toBeNull();
  });
});

describe("changedFields()", () => {
  const item = { id: 1, ...widget, updatedAt: T0.toISOString() };
  test("lists only the given fields whose value differs", () => {
    expect(changedFields(item, { quantity: 3, name: "New", location: undefined })).toEqual([
      "name",
    ]);
    expect(changedFields(item, {})).toEqual([]);
  });
});
