import { describe, expect, test } from "bun:test";
import { ClaimFeed, type ClaimFeedOptions } from "../../../lib/webhooks/delivery/claim-feed.ts";
import { ClaimLedger } from "../../../lib/webhooks/delivery/claim-ledger.ts";
import { ALWAYS_AVAILABLE, createOutageGate } from "../../../lib/webhooks/delivery/loop-outage.ts";
import type { Claim } from "../../../lib/webhooks/model.ts";

function claim(id: number): Claim {
  return {
    attempt: 1,
    workerId: "w",
    generation: 1,
    delivery: { id } as Claim["delivery"],
    webhook: { id: 1 } as Claim["webhook"],
  };
}

/**
 * A feed over an in-memory queue of `due` claims: each claim call is recorded with what it was
 * told the worker holds; `answer` can replace what a claim returns; looking for work waits until
 * the run stops.
 */
function setup(options: { due?: number; concurrency?: number; prefetch?: number } = {}) {
  const pending = Array.from({ length: options.due ?? 6 }, (_, i) => claim(i + 1));
  const told: number[][] = [];
  const released: number[] = [];
  const errors: string[] = [];
  const state: { answer?: (limit: number) => Claim[] } = {};
  const looking: Array<() => void> = [];
  const lookers: Array<() => void> = [];
  /** Resolves once the feed looks for work. */
  const untilLooking = () =>
    looking.length > 0 ? Promise.resolve() : new Promise<void>((r) => lookers.push(r));
  /** Ends the feed's looks for work under way (a change was committed). */
  const workArrives = () => {
    for (const resolve of looking.splice(0)) resolve();
  };
  const feedOptions: ClaimFeedOptions = {
    concurrency: options.concurrency ?? 2,
    prefetch: options.prefetch ?? 0,
    claim: async (limit, holding) => {
      told.push([...holding].sort((a, b) => a - b));
      return state.answer ? state.answer(limit) : pending.splice(0, limit);
    },
    renew: async (claims) => claims,
    release: async (claims) => {
      released.push(...claims.map((c) => c.delivery.id));
    },
    waitForWork: (signal) =>
      new Promise((resolve) => {
        looking.push(resolve);
        for (const wake of lookers.splice(0)) wake();
        signal.addEventListener("abort", () => resolve(), { once: true });
      }),
    availability: ALWAYS_AVAILABLE,
    gate: createOutageGate(ALWAYS_AVAILABLE),
    claimErrorDelayMs: 0,
    onClaimed() {},
    onWithdrawn() {},
    onStoreError: (error, phase) => errors.push(`${phase}: ${(error as Error).message}`),
    onClaimAnswered() {},
  };
  return {
    feed: new ClaimFeed(feedOptions),
    pending,
    told,
    released,
    errors,
    state,
    workArrives,
    untilLooking,
  };
}

const ids = (claims: Array<Claim | null>) => claims.map((c) => c?.delivery.id ?? null);

describe("ClaimFeed", () => {
  test("next() on a feed not running is null", async () => {
    const { feed } = setup();
    expect(await feed.next()).toBeNull();
  });

  test("next() hands out claims first come, first served, and counts them in flight", async () => {
    const { feed } = setup({ concurrency: 2 });
    const stop = new AbortController();
    const running = feed.run({ signal: stop.signal });
    const taken = await Promise.all([feed.next(), feed.next()]);
    expect(ids(taken)).toEqual([1, 2]);
    expect(feed.inFlight).toBe(2);
    stop.abort();
    for (const each of taken) {
      feed.requestEnded();
      feed.handled(each?.delivery.id ?? 0);
    }
    await running;
    expect(feed.inFlight).toBe(0);
  });

  test("next(signal) is null once its signal aborts, and the slot's place goes to the next", async () => {
    const { feed, pending, workArrives, untilLooking } = setup({ due: 0, concurrency: 2 });
    const stop = new AbortController();
    const running = feed.run({ signal: stop.signal });
    const leaving = new AbortController();
    const first = feed.next(leaving.signal);
    const second = feed.next();
    leaving.abort();
    expect(await first).toBeNull();
    pending.push(claim(7));
    await untilLooking();
    workArrives();
    expect((await second)?.delivery.id).toBe(7);
    stop.abort();
    feed.requestEnded();
    feed.handled(7);
    await running;
  });

  test("a claim is told every delivery handed out until handled(): its own claim never takes them over", async () => {
    const { feed, told } = setup({ due: 6, concurrency: 2 });
    const stop = new AbortController();
    const running = feed.run({ signal: stop.signal });
    const [a, b] = await Promise.all([feed.next(), feed.next()]);
    expect(told[0]).toEqual([]);
    // 1's request ends but its result is still on its way: a claim for the freed slot is told
    // of both.
    feed.requestEnded();
    const c = await feed.next();
    expect(told.at(-1)).toEqual([1, 2]);
    feed.handled(a?.delivery.id ?? 0);
    feed.requestEnded();
    const d = await feed.next();
    expect(told.at(-1)).toEqual([2, 3]);
    stop.abort();
    // 2's request ended with 1's turn; 3 and 4 are in flight.
    feed.requestEnded();
    feed.requestEnded();
    for (const each of [b, c, d]) feed.handled(each?.delivery.id ?? 0);
    await running;
  });

  test("a claim answered with a delivery the worker still handles gives back that claim alone and keeps the rest", async () => {
    const { feed, state, errors, released } = setup({ due: 6, concurrency: 2 });
    const stop = new AbortController();
    const running = feed.run({ signal: stop.signal });
    const [a, b] = await Promise.all([feed.next(), feed.next()]);
    // A store that leased a delivery the worker still handles (its result written, handled() not
    // yet called), beside a new one: the batch is committed, so only the conflict goes back.
    state.answer = () => [claim(a?.delivery.id ?? 0), claim(9)];
    feed.requestEnded();
    const c = await feed.next();
    expect(c?.delivery.id).toBe(9);
    expect(errors).toEqual([
      "claim: Claim buffer: claimed delivery 1, already out; that claim was given back",
    ]);
    expect(released).toEqual([1]);
    state.answer = undefined;
    stop.abort();
    for (const each of [a, b, c]) feed.handled(each?.delivery.id ?? 0);
    feed.requestEnded();
    feed.requestEnded();
    await running;
  });

  test("run({ once }) ends when nothing more is due and every claim handed out is handled; waiting slots get null", async () => {
    const { feed } = setup({ due: 3, concurrency: 2 });
    const stop = new AbortController();
    let ended = false;
    const running = feed.run({ signal: stop.signal, once: true }).then(() => {
      ended = true;
    });
    const slot = async () => {
      const seen: number[] = [];
      for (;;) {
        const next = await feed.next();
        if (next === null) return seen;
        seen.push(next.delivery.id);
        feed.requestEnded();
        // The result is written a turn later, as the group commit would.
        await new Promise((resolve) => setImmediate(resolve));
        expect(ended).toBe(false);
        feed.handled(next.delivery.id);
      }
    };
    const seen = (await Promise.all([slot(), slot()])).flat();
    await running;
    expect(seen.sort()).toEqual([1, 2, 3]);
  });

  test("stopping gives back the claims held, and waits for those handed out", async () => {
    const { feed, released } = setup({ due: 6, concurrency: 1, prefetch: 2 });
    const stop = new AbortController();
    let ended = false;
    const running = feed.run({ signal: stop.signal }).then(() => {
      ended = true;
    });
    const first = await feed.next();
    stop.abort();
    await new Promise((resolve) => setImmediate(resolve));
    expect(released.sort()).toEqual([2, 3]);
    expect(ended).toBe(false);
    feed.requestEnded();
    feed.handled(first?.delivery.id ?? 0);
    await running;
    expect(await feed.next()).toBeNull();
  });
});

describe("ClaimLedger", () => {
  test("move() takes a delivery from where it is to where it goes, and counts each place", () => {
    const ledger = new ClaimLedger();
    ledger.move(1, null, "ready");
    ledger.move(2, null, "ready");
    ledger.move(1, "ready", "stale");
    ledger.move(1, "stale", "renewing");
    ledger.move(2, "ready", "out");
    expect(ledger.count).toEqual({ ready: 0, stale: 0, renewing: 1, out: 1 });
    expect([...ledger.ids()].sort()).toEqual([1, 2]);
    ledger.move(1, "held", null);
    ledger.move(2, "out", null);
    expect(ledger.count).toEqual({ ready: 0, stale: 0, renewing: 0, out: 0 });
  });

  const refused: Array<[string, (ledger: ClaimLedger) => void, string]> = [
    [
      "a claim for a delivery already held",
      (l) => l.move(1, null, "ready"),
      "delivery 1 cannot move from nowhere to ready: it is ready",
    ],
    [
      "giving back a claim handed out (released ⊆ held)",
      (l) => l.move(2, "held", null),
      "delivery 2 cannot move from held to nowhere: it is out",
    ],
    [
      "giving back a claim not held",
      (l) => l.move(3, "held", null),
      "delivery 3 cannot move from held to nowhere: it is not held",
    ],
    [
      "handing out a claim that is not ready",
      (l) => l.move(2, "ready", "out"),
      "delivery 2 cannot move from ready to out: it is out",
    ],
    [
      "handled() twice",
      (l) => {
        l.move(2, "out", null);
        l.move(2, "out", null);
      },
      "delivery 2 cannot move from out to nowhere: it is not held",
    ],
  ];
  for (const [name, act, message] of refused) {
    test(`move() refuses ${name}`, () => {
      const ledger = new ClaimLedger();
      ledger.move(1, null, "ready");
      ledger.move(2, null, "ready");
      ledger.move(2, "ready", "out");
      expect(() => act(ledger)).toThrow(message);
    });
  }
});
