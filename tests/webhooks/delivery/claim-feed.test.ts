import { describe, expect, test } from "bun:test";
import {
  ClaimFeed,
  type ClaimFeedOptions,
  type ClaimHandle,
} from "../../../lib/webhooks/delivery/claim-feed.ts";
import { ClaimLedger } from "../../../lib/webhooks/delivery/claim-ledger.ts";
import { ALWAYS_AVAILABLE, createOutageGate } from "../../../lib/webhooks/delivery/loop-outage.ts";
import type { Claim } from "../../../lib/webhooks/model.ts";
import { claimFixture } from "../../fakes/claim.ts";

/**
 * A feed over an in-memory queue of `due` claims: each claim call is recorded with what it was
 * told the worker holds; `answer` can replace what a claim returns; looking for work waits until
 * the run stops.
 */
function setup(options: { due?: number; concurrency?: number; prefetch?: number } = {}) {
  const pending = Array.from({ length: options.due ?? 6 }, (_, i) => claimFixture({ id: i + 1 }));
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

/** setup() with the feed running until `stop` aborts; `running` ends with it. */
function started(options: Parameters<typeof setup>[0] = {}) {
  const parts = setup(options);
  const stop = new AbortController();
  const running = parts.feed.run({ signal: stop.signal });
  return { ...parts, stop, running };
}

const ids = (handles: Array<ClaimHandle | null>) =>
  handles.map((h) => h?.claim.delivery.id ?? null);

describe("ClaimFeed", () => {
  test("next() on a feed not running is null", async () => {
    const { feed } = setup();
    expect(await feed.next()).toBeNull();
  });

  test("next() hands out claims first come, first served, and counts them in flight", async () => {
    const { feed, stop, running } = started({ concurrency: 2 });
    const taken = await Promise.all([feed.next(), feed.next()]);
    expect(ids(taken)).toEqual([1, 2]);
    expect(feed.inFlight).toBe(2);
    stop.abort();
    for (const each of taken) {
      each?.requestEnded();
      each?.handled();
    }
    await running;
    expect(feed.inFlight).toBe(0);
  });

  test("next(signal) is null once its signal aborts, and the slot's place goes to the next", async () => {
    const { feed, pending, workArrives, untilLooking, stop, running } = started({
      due: 0,
      concurrency: 2,
    });
    const leaving = new AbortController();
    const first = feed.next(leaving.signal);
    const second = feed.next();
    leaving.abort();
    expect(await first).toBeNull();
    pending.push(claimFixture({ id: 7 }));
    await untilLooking();
    workArrives();
    const handle = await second;
    expect(handle?.claim.delivery.id).toBe(7);
    stop.abort();
    handle?.requestEnded();
    handle?.handled();
    await running;
  });

  test("a claim is told every delivery handed out until handled(): its own claim never takes them over", async () => {
    const { feed, told, stop, running } = started({ due: 6, concurrency: 2 });
    const [a, b] = await Promise.all([feed.next(), feed.next()]);
    expect(told[0]).toEqual([]);
    // 1's request ends but its result is still on its way: a claim for the freed slot is told
    // of both.
    a?.requestEnded();
    const c = await feed.next();
    expect(told.at(-1)).toEqual([1, 2]);
    a?.handled();
    b?.requestEnded();
    const d = await feed.next();
    expect(told.at(-1)).toEqual([2, 3]);
    stop.abort();
    // 2's request ended with 1's turn; 3 and 4 are in flight.
    c?.requestEnded();
    d?.requestEnded();
    for (const each of [b, c, d]) each?.handled();
    await running;
  });

  test("a claim answered with a delivery the worker still handles gives back that claim alone and keeps the rest", async () => {
    const { feed, state, errors, released, stop, running } = started({ due: 6, concurrency: 2 });
    const [a, b] = await Promise.all([feed.next(), feed.next()]);
    // A store that leased a delivery the worker still handles (its result written, handled() not
    // yet called), beside a new one: the batch is committed, so only the conflict goes back.
    state.answer = () => [claimFixture({ id: a?.claim.delivery.id }), claimFixture({ id: 9 })];
    a?.requestEnded();
    const c = await feed.next();
    expect(c?.claim.delivery.id).toBe(9);
    expect(errors).toEqual([
      "claim: Claim buffer: claimed delivery 1, already recording; that claim was given back",
    ]);
    expect(released).toEqual([1]);
    state.answer = undefined;
    stop.abort();
    b?.requestEnded();
    c?.requestEnded();
    for (const each of [a, b, c]) each?.handled();
    await running;
  });

  test("a handle's ends are called once each, in order: handled() before requestEnded() is refused", async () => {
    const { feed, stop, running } = started({ due: 1, concurrency: 1 });
    const handle = await feed.next();
    expect(() => handle?.handled()).toThrow("cannot move from recording to nowhere: it is sending");
    handle?.requestEnded();
    expect(() => handle?.requestEnded()).toThrow(
      "cannot move from sending to recording: it is recording",
    );
    expect(feed.inFlight).toBe(0);
    stop.abort();
    handle?.handled();
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
        seen.push(next.claim.delivery.id);
        next.requestEnded();
        // The result is written a turn later, as the group commit would.
        await new Promise((resolve) => setImmediate(resolve));
        expect(ended).toBe(false);
        next.handled();
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
    first?.requestEnded();
    first?.handled();
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
    ledger.move(2, "ready", "sending");
    expect(ledger.count).toEqual({ ready: 0, stale: 0, renewing: 1, sending: 1, recording: 0 });
    expect([...ledger.ids()].sort()).toEqual([1, 2]);
    ledger.move(1, "held", null);
    ledger.move(2, "sending", "recording");
    expect(ledger.count).toEqual({ ready: 0, stale: 0, renewing: 0, sending: 0, recording: 1 });
    ledger.move(2, "recording", null);
    expect(ledger.count).toEqual({ ready: 0, stale: 0, renewing: 0, sending: 0, recording: 0 });
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
      "delivery 2 cannot move from held to nowhere: it is sending",
    ],
    [
      "giving back a claim not held",
      (l) => l.move(3, "held", null),
      "delivery 3 cannot move from held to nowhere: it is not held",
    ],
    [
      "handing out a claim that is not ready",
      (l) => l.move(2, "ready", "sending"),
      "delivery 2 cannot move from ready to sending: it is sending",
    ],
    [
      "handled() twice",
      (l) => {
        l.move(2, "sending", "recording");
        l.move(2, "recording", null);
        l.move(2, "recording", null);
      },
      "delivery 2 cannot move from recording to nowhere: it is not held",
    ],
  ];
  for (const [name, act, message] of refused) {
    test(`move() refuses ${name}`, () => {
      const ledger = new ClaimLedger();
      ledger.move(1, null, "ready");
      ledger.move(2, null, "ready");
      ledger.move(2, "ready", "sending");
      expect(() => act(ledger)).toThrow(message);
    });
  }
});
