import type { Delivery, DeliveryFilter } from "../../webhooks/model.ts";

/** Deliveries read at most per item listing page: a bound on what one page view costs. */
export const ITEM_SCAN_LIMIT = 5000;
const BATCH = 500;

export interface ItemDeliveries {
  /** Newest first, at most `want`. */
  deliveries: Delivery[];
  /**
   * Where the search stopped because it read `scanLimit` deliveries without finding `want`:
   * the id to continue below (a page link), or null when it reached the end or found enough.
   */
  stoppedBelow: number | null;
}

/**
 * The deliveries an item's changes queued, newest first: those whose default body (the payload,
 * or a templated payload's context) is a change to that item (`model` "item", `data.id` the
 * item's id). Deliveries carry no item column, so the bodies are read, in batches, at most
 * `scanLimit` of them per call.
 */
export async function findItemDeliveries(
  list: (filter: DeliveryFilter) => Promise<Delivery[]>,
  itemId: number,
  options: { want: number; beforeId?: number; filter?: DeliveryFilter; scanLimit?: number },
): Promise<ItemDeliveries> {
  const scanLimit = options.scanLimit ?? ITEM_SCAN_LIMIT;
  const found: Delivery[] = [];
  let before = options.beforeId;
  let scanned = 0;
  for (;;) {
    const batch = await list({ ...options.filter, beforeId: before, limit: BATCH });
    for (const delivery of batch) {
      scanned += 1;
      if (isForItem(delivery, itemId)) found.push(delivery);
      if (found.length === options.want) return { deliveries: found, stoppedBelow: null };
      if (scanned >= scanLimit) {
        return { deliveries: found, stoppedBelow: batch.length > 0 ? delivery.id : null };
      }
    }
    if (batch.length < BATCH) return { deliveries: found, stoppedBelow: null };
    before = batch.at(-1)?.id;
  }
}

function isForItem(delivery: Delivery, itemId: number): boolean {
  // A payload rendered from a body template keeps the default body as its context.
  const body = delivery.context ?? delivery.payload;
  // Cheap test first: most deliveries are not this item's.
  if (!delivery.event.startsWith("item.") || !body.includes(`"id":${itemId}`)) return false;
  try {
    const parsed = JSON.parse(body) as { model?: unknown; data?: { id?: unknown } };
    return parsed.model === "item" && parsed.data?.id === itemId;
  } catch {
    return false;
  }
}
