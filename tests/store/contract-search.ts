import { describe, expect, test } from "bun:test";
import type { Claim } from "../../lib/webhooks/model.ts";
import type { Store } from "../../lib/webhooks/ports.ts";
import { change, itemChange } from "../fakes/change.ts";

/**
 * The operator's view of the queue, part of the store contract (tests/store/contract.ts runs it
 * on each store): search by filter with paging, the ids a filter matches, and replay.
 */
export interface SearchContext {
  store(): Store;
  clock: { t: number };
  claim(): Promise<Claim[]>;
  record(overrides?: object): Parameters<Store["queue"]["finish"]>[1];
}

export function describeDeliverySearch(ctx: SearchContext): void {
  const T = () => ctx.clock.t;

  /** Two webhooks; a's deliveries at T, T+1000 (one failed), b's at T+2000; then one queued. */
  async function seeded() {
    const store = ctx.store();
    const a = await store.webhooks.create({ name: "a", url: "https://e.example/a" });
    const b = await store.webhooks.create({ name: "b", url: "https://e.example/b" });
    const start = T();
    const first = await store.queue.enqueue(itemChange(1, { event: "item.created" }), {
      webhookId: a.id,
    });
    ctx.clock.t = start + 1000;
    const second = await store.queue.enqueue(itemChange(2), { webhookId: a.id });
    ctx.clock.t = start + 2000;
    const third = await store.queue.enqueue(itemChange(1, { event: "item.deleted" }), {
      webhookId: b.id,
    });
    for (const claim of await ctx.claim()) {
      const fails = claim.delivery.id === second[0];
      await store.queue.finish(
        claim,
        ctx.record(fails ? { statusCode: 500, outcome: "http_error" } : {}),
        fails ? { state: "failed" } : { state: "successful" },
      );
    }
    ctx.clock.t = start + 3000;
    const fourth = await store.queue.enqueue(change({ data: { id: 9 } }), { webhookId: b.id });
    const ids = [...first, ...second, ...third, ...fourth] as [number, number, number, number];
    return { store, a, b, start, ids };
  }

  describe("search, matchingIds, replay", () => {
    test("search() filters by webhook, states, event, object and time, newest first, counted", async () => {
      const { store, a, b, start, ids } = await seeded();
      const [d1, d2, d3, d4] = ids;
      const found = async (filter: Parameters<Store["queue"]["search"]>[0]) => {
        const { deliveries, total } = await store.queue.search(filter, { limit: 10, offset: 0 });
        expect(total).toBe(deliveries.length);
        return deliveries.map((d) => d.id);
      };
      expect(await found({})).toEqual([d4, d3, d2, d1]);
      expect(await found({ webhookId: a.id })).toEqual([d2, d1]);
      const states = await store.queue.idStates([d2, d4, 999_999]);
      expect(states.sort((x, y) => x.id - y.id)).toMatchObject([
        { id: d2, state: "failed", attempts: 1, templateFailed: false },
        { id: d4, state: "queued", attempts: 0, templateFailed: false },
      ]);
      const sent = await store.queue.get(d3);
      expect(await found({ messageId: sent?.delivery.messageId ?? "" })).toEqual([d3]);
      expect(await found({ messageId: "msg_none" })).toEqual([]);
      expect(await found({ webhookId: b.id, states: ["successful"] })).toEqual([d3]);
      expect(await found({ states: ["failed", "queued"] })).toEqual([d4, d2]);
      expect(await found({ states: [] })).toEqual([]);
      expect(await found({ event: "item.updated" })).toEqual([d2]);
      expect(await found({ objectModel: "item", objectId: 1 })).toEqual([d3, d1]);
      expect(await found({ objectId: 9 })).toEqual([d4]);
      expect(await found({ objectModel: "other" })).toEqual([]);
      expect(await found({ since: start + 1000 })).toEqual([d4, d3, d2]);
      expect(await found({ until: start + 2000 })).toEqual([d2, d1]);
      expect(await found({ since: start + 1000, until: start + 2001 })).toEqual([d3, d2]);
      const [shown] = (await store.queue.search({ webhookId: b.id }, { limit: 1, offset: 0 }))
        .deliveries;
      expect(shown).toMatchObject({ id: d4, webhookName: "b", state: "queued" });
      expect(JSON.parse(shown?.payload ?? "")).toMatchObject({ data: { id: 9 } });
    });

    test("search() pages with limit and offset; total counts every match", async () => {
      const { store, ids } = await seeded();
      const [d1, d2, d3, d4] = ids;
      const page = (offset: number) => store.queue.search({}, { limit: 3, offset });
      const first = await page(0);
      expect(first.deliveries.map((d) => d.id)).toEqual([d4, d3, d2]);
      expect(first.total).toBe(4);
      const second = await page(3);
      expect(second.deliveries.map((d) => d.id)).toEqual([d1]);
      expect(second.total).toBe(4);
      expect((await page(4)).deliveries).toEqual([]);
    });

    test("matchingIds() gives the ids oldest first, at most the limit", async () => {
      const { store, a, ids } = await seeded();
      expect(await store.queue.matchingIds({}, 10)).toEqual(ids);
      expect(await store.queue.matchingIds({}, 2)).toEqual(ids.slice(0, 2));
      expect(await store.queue.matchingIds({ webhookId: a.id, states: ["failed"] }, 10)).toEqual([
        ids[1],
      ]);
    });

    test("matchingIds() after an id gives the next page: the ids after it, oldest first", async () => {
      const { store, ids } = await seeded();
      expect(await store.queue.matchingIds({}, 2, ids[1])).toEqual(ids.slice(2, 4));
      expect(await store.queue.matchingIds({}, 10, ids[3])).toEqual([]);
    });

    test("replay() queues successful and failed deliveries again, the same message, history kept", async () => {
      const { store, ids } = await seeded();
      const [d1, d2, d3, d4] = ids;
      const before = await store.queue.get(d1);
      ctx.clock.t += 5000;
      expect(await store.queue.replay([d1, d2, d4, 999_999], T())).toBe(2);
      const after = await store.queue.get(d1);
      expect(after?.delivery).toMatchObject({
        state: "queued",
        attempts: 1,
        nextAttemptAt: T(),
        completedAt: null,
        messageId: before?.delivery.messageId,
        payload: before?.delivery.payload,
      });
      expect(after?.attempts).toHaveLength(1);
      expect((await store.queue.get(d2))?.delivery.state).toBe("queued");
      expect((await store.queue.get(d3))?.delivery.state).toBe("successful");
      expect((await store.queue.get(d4))?.delivery).toMatchObject({ state: "queued", attempts: 0 });
      // The next claim makes attempt 2 of each replayed delivery.
      const claims = await ctx.claim();
      expect(
        claims
          .filter((c) => c.delivery.id !== d4)
          .map((c) => [c.delivery.id, c.attempt])
          .sort(),
      ).toEqual(
        [
          [d1, 2],
          [d2, 2],
        ].sort(),
      );
      expect(await store.queue.replay([], T())).toBe(0);
    });
  });
}
