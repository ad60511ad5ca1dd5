import type { ChangeEvent } from "../../lib/webhooks/model.ts";

/** The one item change tests enqueue: NetBox's example body's shape; override what a test needs. */
export function change(overrides: Partial<ChangeEvent> = {}): ChangeEvent {
  return {
    event: "item.created",
    model: "item",
    username: "alice",
    requestId: "3f2a6c1e-0000-4000-8000-000000000001",
    data: { id: 1, sku: "A-1", name: "Widget", quantity: 3 },
    prechange: null,
    postchange: { sku: "A-1", name: "Widget", quantity: 3 },
    timestamp: new Date(Date.UTC(2021, 2, 9, 17, 55, 33, 968)),
    ...overrides,
  };
}

/** The n-th of a series of changes to different items: its own request id and item id. */
export function itemChange(n = 1, overrides: Partial<ChangeEvent> = {}): ChangeEvent {
  return change({
    event: "item.updated",
    username: "worker-test",
    requestId: `req-${n}`,
    data: { id: n, sku: `SKU-${n}`, quantity: n },
    prechange: { quantity: n - 1 },
    postchange: { quantity: n },
    timestamp: new Date(0),
    ...overrides,
  });
}
