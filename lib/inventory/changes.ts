import type { ChangeEvent, ItemEvent } from "../webhooks/model.ts";
import type { Store } from "../webhooks/ports.ts";
import type { Item, ItemPatch, NewItem } from "./model.ts";

/** Who made a change and when: goes into the webhook payload (NetBox's username, request_id). */
export interface ChangeContext {
  username: string;
  requestId: string;
  now: Date;
}

type TransactionalStore = Pick<Store, "transaction">;

export interface ItemChange {
  item: Item;
  /** Ids of the deliveries queued in the same transaction (one per subscribed webhook). */
  deliveryIds: number[];
}

/**
 * Item changes. Each writes the item and enqueues its deliveries in one transaction, so both
 * commit or neither does; nothing here waits for a delivery (a separate worker sends them).
 * A write that throws (e.g. DuplicateSkuError) rolls back and enqueues nothing.
 */
export async function createItem(
  store: TransactionalStore,
  input: NewItem,
  context: ChangeContext,
): Promise<ItemChange> {
  return store.transaction(async (tx) => {
    const item = await tx.items.create(input, context.now);
    const deliveryIds = await tx.queue.enqueue(
      itemChangeEvent("item.created", context, { data: item, prechange: null, postchange: item }),
    );
    return { item, deliveryIds };
  });
}

/**
 * Applies `patch`; `changed` is false (and nothing is written or queued) when every given field
 * already has that value. Null for an unknown id.
 */
export async function updateItem(
  store: TransactionalStore,
  id: number,
  patch: ItemPatch,
  context: ChangeContext,
): Promise<(ItemChange & { changed: boolean }) | null> {
  return store.transaction(async (tx) => {
    // Decided under the row lock: with an unlocked read, identical concurrent PATCHes would all
    // see the old value and each queue an item.updated whose prechange equals its postchange.
    const current = await tx.items.getForUpdate(id);
    if (!current) return null;
    if (changedFields(current, patch).length === 0) {
      return { item: current, changed: false, deliveryIds: [] };
    }
    const result = await tx.items.update(id, patch, context.now);
    if (!result) return null;
    const deliveryIds = await tx.queue.enqueue(
      itemChangeEvent("item.updated", context, {
        data: result.after,
        prechange: result.before,
        postchange: result.after,
      }),
    );
    return { item: result.after, changed: true, deliveryIds };
  });
}

/** Null for an unknown id. */
export async function deleteItem(
  store: TransactionalStore,
  id: number,
  context: ChangeContext,
): Promise<ItemChange | null> {
  return store.transaction(async (tx) => {
    const item = await tx.items.remove(id);
    if (!item) return null;
    const deliveryIds = await tx.queue.enqueue(
      itemChangeEvent("item.deleted", context, { data: item, prechange: item, postchange: null }),
    );
    return { item, deliveryIds };
  });
}

/** The fields of `patch` whose value differs from `item` (undefined means "not given"). */
export function changedFields(item: Item, patch: ItemPatch): Array<keyof ItemPatch> {
  return (Object.keys(patch) as Array<keyof ItemPatch>).filter(
    (key) => patch[key] !== undefined && patch[key] !== item[key],
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
