import { afterEach, describe, expect, test } from "bun:test";
import { createItem, deleteItem } from "../../lib/webhooks/events/item-changes.ts";
import { createDeliveryWorker } from "../../lib/worker/bind.ts";
import { databaseFileAndEndpoint } from "../fakes/database-file.ts";
import { loopbackWorkerConfig } from "../fakes/test-worker.ts";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

// A plain webhook, and a templated one (its creates are planned ahead with an id from nextId()).
describe.each([
  ["NetBox's body", undefined],
  [
    "a body template",
    '{"event": "{{ event }}", "model": "{{ model }}", "data": {"id": {{ data.id }}, "sku": {{ data.sku | tojson }}}}',
  ],
])("on SQLite, with %s", (_name, bodyTemplate) => {
  test("delete the newest item and create another: a new id, so a receiver tells the retried item.deleted from the item.created", async () => {
    const clock = { t: Date.now() };
    // The item.deleted's first attempt (the second request) fails; it is retried last.
    const { store, endpoint } = databaseFileAndEndpoint(
      (_request, index) => new Response("", { status: index === 1 ? 500 : 200 }),
      { cleanups, prefix: "ids-", now: () => clock.t },
    );
    await store.webhooks.create({ name: "erp", url: endpoint.url, bodyTemplate });
    const worker = createDeliveryWorker({
      store,
      now: () => clock.t,
      random: () => 0.5,
      config: loopbackWorkerConfig({ maxAttempts: 3 }),
    });
    const context = () => ({ username: "admin", requestId: "r", now: new Date(clock.t) });
    const bolt = { sku: "BOLT", name: "Bolt", quantity: 1, location: "" };
    const nut = { sku: "NUT", name: "Nut", quantity: 2, location: "" };

    const old = (await createItem(store, bolt, context())).item;
    await worker.runOnce();
    await deleteItem(store, old.id, context());
    await worker.runOnce();
    const fresh = (await createItem(store, nut, context())).item;
    await worker.runOnce();
    clock.t += 60_000;
    await worker.runOnce();

    expect(fresh.id).not.toBe(old.id);
    const seen = endpoint.requests.map((request) => {
      const body = JSON.parse(request.body) as { event: string; data: { id: number; sku: string } };
      return [body.event, body.data.id, body.data.sku];
    });
    expect(seen).toEqual([
      ["created", old.id, "BOLT"],
      ["deleted", old.id, "BOLT"],
      ["created", fresh.id, "NUT"],
      ["deleted", old.id, "BOLT"],
    ]);
    // A receiver keeping a copy by id: the retried delete removes the old item, never the new one.
    const copy = new Map<number, string>();
    for (const [event, id, sku] of seen) {
      if (event === "created") copy.set(id as number, sku as string);
      else copy.delete(id as number);
    }
    expect([...copy]).toEqual([[fresh.id, "NUT"]]);
    expect(await store.queue.stats()).toMatchObject({ successful: 3, failed: 0, queued: 0 });
  });
});
