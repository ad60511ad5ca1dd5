import type { Item, ItemPatch, NewItem } from "../../inventory/model.ts";
import type { ChangeEvent, ItemEvent } from "../model.ts";
import type { Store } from "../ports.ts";

/** Who made a change and when: goes into the webhook payload (NetBox's username, request_id). */
export interface ChangeContext {
  username: string;
  requestId: string;
  now: Date;
}

type ChangingStore = Pick<Store, "transaction" | "items" | "queue">;

export interface ItemChange {
  item: Item;
  /** Ids of the deliveries queued in the same transaction (one per subscribed webhook). */
  deliveryIds: number[];
}

/**
 * Tries at planning a change before its transaction. A plan found stale inside it (the item
 * written by someone else meanwhile) is made again; the last try plans inside the transaction,
 * as before plans, bounded by the change's render budget.
 */
const PLAN_TRIES = 3;

/**
 * Whether this try plans ahead: not the last, and some webhook renders off the thread (with
 * none, rendering is instant and planning ahead would only add reads).
 */
async function plansAhead(store: ChangingStore, attempt: number): Promise<boolean> {
  return attempt < PLAN_TRIES && (await store.queue.worthPlanning());
}
const STALE = Symbol("a concurrent write made the plan stale");

/**
 * Item changes. Each writes the item and enqueues its deliveries in one transaction, so both
 * commit or neither does; nothing here waits for a delivery (a separate worker sends them).
 * A write that throws (e.g. DuplicateSkuError) rolls back and enqueues nothing. The change's
 * templates are rendered first, outside the transaction, from the item as read then (the
 * queue's plan), so no lock is held while they render: the transaction checks the item is
 * still as planned from, and plans again otherwise.
 */
export async function createItem(
  store: ChangingStore,
  input: NewItem,
  context: ChangeContext,
): Promise<ItemChange> {
  for (let attempt = 1; ; attempt++) {
    const id = (await plansAhead(store, attempt)) ? await store.items.nextId() : null;
    const plan =
      id === null
        ? undefined
        : await store.queue.plan(created(context, newItem(id, input, context)));
    const result = await store.transaction(async (tx) => {
      const item =
        id === null
          ? await tx.items.create(input, context.now)
          : await tx.items.createWithId(input, context.now, id);
      if (!item) return STALE;
      const deliveryIds = await tx.queue.enqueue(created(context, item), { plan });
      return { item, deliveryIds };
    });
    if (result !== STALE) return result;
  }
}

/**
 * Applies `patch`; `changed` is false (and nothing is written or queued) when every given field
 * already has that value. Null for an unknown id.
 */
export async function updateItem(
  store: ChangingStore,
  id: number,
  patch: ItemPatch,
  context: ChangeContext,
): Promise<(ItemChange & { changed: boolean }) | null> {
  for (let attempt = 1; ; attempt++) {
    const seen = (await plansAhead(store, attempt)) ? await store.items.get(id) : null;
    const plan =
      seen === null || changedFields(seen, patch).length === 0
        ? undefined
        : await store.queue.plan(updated(context, seen, patched(seen, patch, context)));
    const result = await store.transaction(async (tx) => {
      // Decided under the row lock: with an unlocked read, identical concurrent PATCHes would all
      // see the old value and each queue an item.updated whose prechange equals its postchange.
      const current = await tx.items.getForUpdate(id);
      if (!current) return null;
      if (changedFields(current, patch).length === 0) {
        return { item: current, changed: false, deliveryIds: [] };
      }
      if (plan !== undefined && !sameItem(current, seen)) return STALE;
      const result = await tx.items.update(id, patch, context.now);
      if (!result) return null;
      const deliveryIds = await tx.queue.enqueue(updated(context, result.before, result.after), {
        plan,
      });
      return { item: result.after, changed: true, deliveryIds };
    });
    if (result !== STALE) return result;
  }
}

/** Null for an unknown id. */
export async function deleteItem(
  store: ChangingStore,
  id: number,
  context: ChangeContext,
): Promise<ItemChange | null> {
  for (let attempt = 1; ; attempt++) {
    const seen = (await plansAhead(store, attempt)) ? await store.items.get(id) : null;
    const plan = seen === null ? undefined : await store.queue.plan(deleted(context, seen));
    const result = await store.transaction(async (tx) => {
      if (plan !== undefined) {
        const current = await tx.items.getForUpdate(id);
        if (current !== null && !sameItem(current, seen)) return STALE;
      }
      const item = await tx.items.remove(id);
      if (!item) return null;
      const deliveryIds = await tx.queue.enqueue(deleted(context, item), { plan });
      return { item, deliveryIds };
    });
    if (result !== STALE) return result;
  }
}

/** The fields of `patch` whose value differs from `item` (undefined means "not given"). */
export function changedFields(item: Item, patch: ItemPatch): Array<keyof ItemPatch> {
  return (Object.keys(patch) as Array<keyof ItemPatch>).filter(
    (key) => patch[key] !== undefined && patch[key] !== item[key],
  );
}

function created(context: ChangeContext, item: Item): ChangeEvent {
  return itemChangeEvent("item.created", context, {
    data: item,
    prechange: null,
    postchange: item,
  });
}

function updated(context: ChangeContext, before: Item, after: Item): ChangeEvent {
  return itemChangeEvent("item.updated", context, {
    data: after,
    prechange: before,
    postchange: after,
  });
}

function deleted(context: ChangeContext, item: Item): ChangeEvent {
  return itemChangeEvent("item.deleted", context, {
    data: item,
    prechange: item,
    postchange: null,
  });
}

/** The item a create will write, fields in the order the stores return them. */
function newItem(id: number, input: NewItem, context: ChangeContext): Item {
  return {
    id,
    sku: input.sku,
    name: input.name,
    quantity: input.quantity,
    location: input.location,
    updatedAt: context.now.toISOString(),
  };
}

/** The item an update will write, from the item as read. */
function patched(item: Item, patch: ItemPatch, context: ChangeContext): Item {
  const after: Item = { ...item, updatedAt: context.now.toISOString() };
  for (const key of Object.keys(patch) as Array<keyof ItemPatch>) {
    const value = patch[key];
    if (value !== undefined) (after as unknown as Record<string, unknown>)[key] = value;
  }
  return after;
}

function sameItem(a: Item, b: Item | null): boolean {
  return (
    b !== null &&
    a.id === b.id &&
    a.sku === b.sku &&
    a.name === b.name &&
    a.quantity === b.quantity &&
    a.location === b.location &&
    a.updatedAt === b.updatedAt
  );
}

function itemChangeEvent(
  event: ItemEvent,
  context: ChangeContext,
  snapshot: { data: Item; prechange: Item | null; postchange: Item | null },
): ChangeEvent {
  return {
    event,
    model: "item",
    username: context.username,
    requestId: context.requestId,
    timestamp: context.now,
    ...snapshot,
  };
}
