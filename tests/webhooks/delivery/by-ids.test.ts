import { afterEach, expect, test } from "bun:test";
import { replayByIds, retryByIds } from "../../../lib/webhooks/delivery/by-ids.ts";
import type { BulkPace } from "../../../lib/webhooks/delivery/replay.ts";
import type { Store } from "../../../lib/webhooks/ports.ts";
import { change } from "../../fakes/change.ts";
import { openSqliteDb } from "../../fakes/sqlite-db.ts";
import { record } from "../../store/contract.ts";

const opened: Store[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

/** Claims what is due and records each as `state`, in the order claimed. */
async function workOnce(store: Store, state: "successful" | "failed", sent: number[]) {
  const claims = await store.queue.claim({
    workerId: "w1",
    limit: 10,
    leaseMs: 60_000,
    now: Date.now(),
  });
  for (const claim of claims) {
    sent.push(claim.delivery.id);
    await store.queue.finish(claim, record(), { state });
  }
}

/**
 * An ordered webhook with three changes of item 1, each sent once and ended `state`; a pace of
 * one id a chunk whose pause lets a worker claim and send what is due, as one does between the
 * chunks of a bulk call.
 */
async function setUp(state: "successful" | "failed") {
  const { store } = openSqliteDb();
  opened.push(store);
  await store.webhooks.create({ name: "erp", url: "https://erp.example/h", ordered: true });
  for (const quantity of [1, 2, 3]) {
    await store.queue.enqueue(change({ data: { id: 1, sku: "A-1", name: "Widget", quantity } }));
  }
  const sent: number[] = [];
  for (let i = 0; i < 3; i++) await workOnce(store, state, sent);
  expect(sent).toEqual([1, 2, 3]);
  sent.length = 0;
  const pace: BulkPace = { chunkSize: 1, pause: () => workOnce(store, "successful", sent) };
  return { store, sent, pace };
}

test("replayByIds() of an ordered webhook's changes given newest first sends them again in commit order", async () => {
  const { store, sent, pace } = await setUp("successful");
  const done = await replayByIds(store.queue, [3, 2, 1], Date.now(), pace);
  expect(done).toEqual({ count: 3, matched: 3, skipped: [] });
  for (let i = 0; i < 3; i++) await workOnce(store, "successful", sent);
  expect(sent).toEqual([1, 2, 3]);
});

test("retryByIds() likewise, and says why of ids left in the order they were given", async () => {
  const { store, sent, pace } = await setUp("failed");
  const done = await retryByIds(store.queue, [9, 3, 2, 8, 1], Date.now(), pace);
  expect(done).toEqual({
    count: 3,
    matched: 5,
    skipped: [
      { id: 9, reason: "unknown" },
      { id: 8, reason: "unknown" },
    ],
  });
  for (let i = 0; i < 3; i++) await workOnce(store, "successful", sent);
  expect(sent).toEqual([1, 2, 3]);
});
