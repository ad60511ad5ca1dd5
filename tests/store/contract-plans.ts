import { afterEach, describe, expect, test } from "bun:test";
import {
  type ChangeContext,
  createItem,
  deleteItem,
  updateItem,
} from "../../lib/webhooks/events/item-changes.ts";
import { relayOperationalEvents } from "../../lib/webhooks/events/operational-events.ts";
import type { Store } from "../../lib/webhooks/ports.ts";
import {
  type RenderTemplates,
  sharedTemplateRenderer,
} from "../../lib/webhooks/rendering/render-process.ts";
import { change } from "../fakes/change.ts";
import type { MakeStore } from "./contract.ts";

/**
 * Part of the store contract (tests/store/contract.ts runs it on each store): a change's
 * templates are rendered before its write transaction (queue.plan), and what was planned is
 * checked at insert against the item and the webhooks as they are then.
 */
export interface PlanContext {
  makeStore: MakeStore;
  clock: { now: () => number };
}

/**
 * The process's renderer, counting its calls; once `hold()` is called, the next render waits
 * (after saying it started) until `release()`.
 */
function gatedRenderer() {
  const real = sharedTemplateRenderer().render;
  let gate: Promise<void> | null = null;
  let open: () => void = () => {};
  let started: () => void = () => {};
  const state = {
    calls: 0,
    /** Resolves when the held render has begun. */
    hold(): Promise<void> {
      gate = new Promise<void>((resolve) => {
        open = resolve;
      });
      return new Promise<void>((resolve) => {
        started = resolve;
      });
    },
    release: () => open(),
    render: (async (webhook, body, options) => {
      state.calls++;
      const waiting = gate;
      if (waiting !== null) {
        gate = null;
        started();
        await waiting;
      }
      return real(webhook, body, options);
    }) as RenderTemplates,
  };
  return state;
}

const widget = { sku: "W-1", name: "Widget", quantity: 3, location: "A" };
const ctx = (minute: number): ChangeContext => ({
  username: "alice",
  requestId: `req-${minute}`,
  now: new Date(Date.UTC(2026, 0, 1, 0, minute)),
});

export function describePlannedChanges({ makeStore, clock }: PlanContext): void {
  describe("changes planned before their transaction", () => {
    const renderer = gatedRenderer();
    let store: Store;
    let cleanup: () => Promise<void> = async () => {};

    async function open(): Promise<Store> {
      const fixture = await makeStore({ now: clock.now, renderTemplates: renderer.render });
      cleanup = fixture.cleanup;
      store = fixture.store;
      return store;
    }

    afterEach(async () => {
      renderer.release();
      await cleanup();
    });

    async function bodies(webhookId: number): Promise<string[]> {
      const deliveries = await store.queue.list({ webhookId });
      return deliveries.reverse().map((d) => d.payload);
    }

    test("updateItem(): while its template renders, another client writes and reads items; the change lands after", async () => {
      await open();
      const hook = await store.webhooks.create({
        name: "q",
        url: "https://e.example/q",
        bodyTemplate: "{{ snapshots.prechange.quantity }}>{{ snapshots.postchange.quantity }}",
      });
      const calls = renderer.calls;
      const { item } = await createItem(store, widget, ctx(1));
      const rendering = renderer.hold();
      const patching = updateItem(store, item.id, { quantity: 5 }, ctx(2));
      await rendering;
      // With the render inside the transaction, these waited for it (SQLite) or its row lock.
      const other = await createItem(store, { ...widget, sku: "W-2" }, ctx(3));
      expect(await store.items.get(other.item.id)).toEqual(other.item);
      expect(await store.items.count()).toBe(2);
      renderer.release();
      const patched = await patching;
      expect(patched?.item.quantity).toBe(5);
      expect(patched?.deliveryIds).toHaveLength(1);
      expect(await bodies(hook.id)).toEqual([">3", ">3", "3>5"]);
      // One render per change: each plan was used at insert, none rendered again there.
      expect(renderer.calls - calls).toBe(3);
    });

    test("updateItem(): a PATCH of the same item between planning and writing makes it plan again, with the final values", async () => {
      await open();
      const hook = await store.webhooks.create({
        name: "q",
        url: "https://e.example/q",
        events: ["item.updated"],
        bodyTemplate: "{{ snapshots.prechange.quantity }}>{{ snapshots.postchange.quantity }}",
      });
      const { item } = await createItem(store, widget, ctx(1));
      const calls = renderer.calls;
      const rendering = renderer.hold();
      const first = updateItem(store, item.id, { quantity: 5 }, ctx(2));
      await rendering;
      const second = await updateItem(store, item.id, { quantity: 7 }, ctx(3));
      expect(second?.item.quantity).toBe(7);
      renderer.release();
      const result = await first;
      expect(result?.item).toMatchObject({ quantity: 5, updatedAt: ctx(2).now.toISOString() });
      // Planned from quantity 3, written over 7: the delivery says what was replaced.
      expect(await bodies(hook.id)).toEqual(["3>7", "7>5"]);
      // The first PATCH's plan, the second's, and the first's again once found stale.
      expect(renderer.calls - calls).toBe(3);
      const [last] = await store.queue.list({ webhookId: hook.id });
      expect(JSON.parse(last?.context ?? "null").snapshots.prechange.quantity).toBe(7);
    });

    test("createItem(): its template renders before the item is written, and the delivery carries the item's id", async () => {
      await open();
      const hook = await store.webhooks.create({
        name: "id",
        url: "https://e.example/{{ data.id }}",
        events: ["item.created"],
        bodyTemplate: "{{ data.id }} {{ data.sku }}",
      });
      const calls = renderer.calls;
      const rendering = renderer.hold();
      const creating = createItem(store, widget, ctx(1));
      await rendering;
      // Another create meanwhile: it plans with the next id (reserved, on both stores).
      const other = await createItem(store, { ...widget, sku: "W-2" }, ctx(2));
      expect(await store.items.count()).toBe(1);
      renderer.release();
      const { item, deliveryIds } = await creating;
      expect(deliveryIds).toHaveLength(1);
      expect(item.id).not.toBe(other.item.id);
      expect((await bodies(hook.id)).sort()).toEqual(
        [`${other.item.id} W-2`, `${item.id} W-1`].sort(),
      );
      const urls = (await store.queue.list({ webhookId: hook.id })).map((d) => d.url).sort();
      expect(urls).toEqual([item.id, other.item.id].map((id) => `https://e.example/${id}`).sort());
      // Neither planned again: the ids they planned with were their own.
      expect(renderer.calls - calls).toBe(2);
    });

    test("deleteItem(): renders outside the transaction; an update meanwhile is what the deletion reports", async () => {
      await open();
      const hook = await store.webhooks.create({
        name: "gone",
        url: "https://e.example/g",
        events: ["item.deleted"],
        bodyTemplate: "{{ snapshots.prechange.name }}",
      });
      const { item } = await createItem(store, widget, ctx(1));
      const calls = renderer.calls;
      const rendering = renderer.hold();
      const deleting = deleteItem(store, item.id, ctx(2));
      await rendering;
      await updateItem(store, item.id, { name: "Renamed" }, ctx(3));
      renderer.release();
      expect((await deleting)?.item.name).toBe("Renamed");
      expect(await store.items.get(item.id)).toBeNull();
      expect(await bodies(hook.id)).toEqual(["Renamed"]);
      expect(renderer.calls - calls).toBe(2);
    });

    test("enqueue() with a plan: unchanged webhooks keep what was planned; disabled or removed ones get nothing; edited or created ones render at insert", async () => {
      await open();
      const hooks = [];
      for (const name of ["kept", "disabled", "removed", "edited"]) {
        hooks.push(
          await store.webhooks.create({
            name,
            url: `https://e.example/${name}`,
            bodyTemplate: `${name} {{ data.sku }}`,
          }),
        );
      }
      const [kept, disabled, removed, edited] = hooks;
      if (!kept || !disabled || !removed || !edited) throw new Error("webhooks not created");
      const plan = await store.queue.plan(change());
      expect(plan.planned.map((d) => d.webhookId)).toEqual(hooks.map((h) => h.id));
      await store.webhooks.update(disabled.id, { enabled: false });
      await store.webhooks.remove(removed.id);
      await store.webhooks.update(edited.id, { bodyTemplate: "edited now {{ data.sku }}" });
      const created = await store.webhooks.create({
        name: "created",
        url: "https://e.example/c",
        bodyTemplate: "created {{ data.sku }}",
      });
      const before = renderer.calls;
      const ids = await store.transaction((tx) => tx.queue.enqueue(change(), { plan }));
      expect(ids).toHaveLength(3);
      // Only the edited and the created webhook were rendered at insert.
      expect(renderer.calls - before).toBe(2);
      const listed = (await store.queue.list({})).map((d) => [d.webhookId, d.payload]);
      expect(listed.sort()).toEqual(
        [
          [kept.id, "kept A-1"],
          [edited.id, "edited now A-1"],
          [created.id, "created A-1"],
        ].sort(),
      );
    });

    test("relayOperationalEvents(): events are peeked and their templates render before the transaction that takes them", async () => {
      await open();
      const ops = await store.webhooks.create({
        name: "ops",
        url: "https://e.example/ops",
        events: ["webhook.disabled"],
        bodyTemplate: "{{ data.name }} off",
      });
      const crm = await store.webhooks.create({ name: "crm", url: "https://e.example/crm" });
      const announce = {
        event: "webhook.disabled" as const,
        notFor: crm.id,
        data: '{"name":"crm"}',
      };
      await store.health.disable(crm.id, { reason: "x", now: clock.now(), announce });
      const [pending] = await store.events.peek(10);
      expect(pending).toMatchObject({ event: "webhook.disabled", notFor: crm.id });
      expect(await store.events.peek(10)).toHaveLength(1);
      const calls = renderer.calls;
      const rendering = renderer.hold();
      const relaying = relayOperationalEvents(store);
      await rendering;
      // With the render inside the relay's transaction, this waited for it (SQLite).
      const other = await createItem(store, widget, ctx(1));
      expect(other.deliveryIds).toEqual([]);
      renderer.release();
      expect(await relaying).toBe(1);
      expect(await store.events.hasPending()).toBe(false);
      expect(await bodies(ops.id)).toEqual(["crm off"]);
      expect(renderer.calls - calls).toBe(1);
    });

    test("worthPlanning(): yes until the webhooks are read, then whether one has a template or a regex condition; a stale no renders one change inside, then plans again", async () => {
      await open();
      expect(await store.queue.worthPlanning()).toBe(true);
      await store.webhooks.create({ name: "plain", url: "https://e.example/p" });
      const { item } = await createItem(store, widget, ctx(1));
      expect(await store.queue.worthPlanning()).toBe(false);
      const regex = await store.webhooks.create({
        name: "regex",
        url: "https://e.example/r",
        conditions: { and: [{ attr: "sku", op: "regex", value: "^W-" }] },
      });
      // Not read yet: this change renders inside its transaction, as before plans.
      expect(await store.queue.worthPlanning()).toBe(false);
      await updateItem(store, item.id, { quantity: 4 }, ctx(2));
      expect(await store.queue.worthPlanning()).toBe(true);
      expect(await store.queue.list({ webhookId: regex.id })).toHaveLength(1);
      const rendering = renderer.hold();
      const patching = updateItem(store, item.id, { quantity: 5 }, ctx(3));
      await rendering;
      await createItem(store, { ...widget, sku: "W-2" }, ctx(4));
      renderer.release();
      expect((await patching)?.deliveryIds).toHaveLength(2);
      await store.webhooks.remove(regex.id);
      await createItem(store, { ...widget, sku: "W-3" }, ctx(5));
      expect(await store.queue.worthPlanning()).toBe(false);
    });

    test("enqueue() ignores a plan made for another change and renders this one", async () => {
      await open();
      const hook = await store.webhooks.create({
        name: "sku",
        url: "https://e.example/s",
        bodyTemplate: "{{ data.sku }}",
      });
      const plan = await store.queue.plan(change());
      const other = change({ data: { id: 2, sku: "B-2", name: "Other", quantity: 1 } });
      await store.queue.enqueue(other, { plan });
      expect(await bodies(hook.id)).toEqual(["B-2"]);
    });
  });
}
