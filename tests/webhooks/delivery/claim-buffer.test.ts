import { describe, expect, test } from "bun:test";
import {
  ClaimBuffer,
  type ClaimBufferOptions,
} from "../../../lib/webhooks/delivery/claim-buffer.ts";
import type { Freshness } from "../../../lib/webhooks/delivery/lease-rules.ts";
import { createOutageGate } from "../../../lib/webhooks/delivery/loop-outage.ts";
import type { Claim } from "../../../lib/webhooks/model.ts";
import { claimFixture } from "../../fakes/claim.ts";
import { gate as opening } from "../../fakes/webhook-endpoint.ts";

const claim = (id: number): Claim => claimFixture({ id });

/** Lets the promise callbacks already queued run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

/**
 * A buffer over an in-memory queue of `due` claims. Renewals wait until the test opens them;
 * `stale` claims may not start as held; the database answers while `reachable`.
 */
function setup(options: { due?: number; concurrency?: number } = {}) {
  const pending = Array.from({ length: options.due ?? 10 }, (_, i) => claim(i + 1));
  const state = { reachable: true, ready: 0 };
  const stale = new Set<number>();
  const released: number[] = [];
  const withdrawn: number[] = [];
  const renewals: Array<{ claims: Claim[]; answer(keep: Claim[] | Error): void }> = [];
  let back = opening();
  const freshness: Freshness = {
    now: () => 0,
    remember() {},
    prepare: (held) => (stale.has(held.delivery.id) ? null : held),
  };
  const gate = createOutageGate({
    reachable: () => state.reachable,
    untilReachable: (signal) =>
      state.reachable
        ? Promise.resolve()
        : Promise.race([
            back.promise,
            new Promise<void>((r) => signal.addEventListener("abort", () => r())),
          ]),
  });
  const bufferOptions: ClaimBufferOptions = {
    concurrency: options.concurrency ?? 2,
    claim: async (limit) => pending.splice(0, limit),
    renew: (claims) =>
      new Promise((resolve, reject) => {
        renewals.push({
          claims,
          answer: (keep) => (keep instanceof Error ? reject(keep) : resolve(keep)),
        });
      }),
    release: async (claims) => {
      released.push(...claims.map((c) => c.delivery.id));
    },
    freshness,
    gate,
    onReady: () => state.ready++,
    onClaimed() {},
    onWithdrawn: (count) => withdrawn.push(count),
    onRenewError() {},
    onConflict() {},
  };
  const buffer = new ClaimBuffer(bufferOptions);
  const ids = (claims: readonly Claim[]) => claims.map((c) => c.delivery.id);
  return {
    buffer,
    gate,
    state,
    stale,
    released,
    withdrawn,
    renewals,
    ids,
    databaseBack() {
      state.reachable = true;
      back.open();
      back = opening();
    },
  };
}

/** setup() with the buffer started and its first `claimed` claims taken in (ready). */
async function started(claimed: number, options: Parameters<typeof setup>[0] = {}) {
  const parts = setup(options);
  parts.buffer.start();
  await parts.buffer.topUp(claimed);
  return parts;
}

describe("ClaimBuffer modes", () => {
  test("STOPPED → ACCEPTING: start() opens it; a stopped buffer hands out nothing", async () => {
    const { buffer, ids } = setup();
    expect(buffer.mode).toBe("STOPPED");
    expect(buffer.take(2)).toEqual([]);
    buffer.start();
    expect(buffer.mode).toBe("ACCEPTING");
    expect(await buffer.topUp(6)).toBe(6); // 10 due, 6 asked for
    expect(buffer.held).toBe(6);
    expect(ids(buffer.take(2))).toEqual([1, 2]);
  });

  test("start() is refused unless stopped: transitions are asserted", () => {
    const { buffer } = setup();
    buffer.start();
    expect(() => buffer.start()).toThrow("Claim buffer: cannot enter ACCEPTING from ACCEPTING");
  });

  test("ACCEPTING → RECHECKING: a stale head sets aside every stale claim in one renewal; fresh ones still go out", async () => {
    const { buffer, stale, renewals, ids } = await started(6);
    stale.add(1);
    stale.add(3);
    expect(ids(buffer.take(2))).toEqual([2, 4]);
    expect(buffer.mode).toBe("RECHECKING");
    expect(renewals.map((r) => ids(r.claims))).toEqual([[1, 3]]);
    expect(buffer.held).toBe(4); // 5, 6 ready; 1, 3 being renewed
    // Found stale during the renewal: they wait for the next one.
    stale.add(5);
    expect(ids(buffer.take(1))).toEqual([6]);
    expect(renewals).toHaveLength(1);
  });

  test("RECHECKING → ACCEPTING: renewed claims come first and start without another check; dropped ones are counted", async () => {
    const { buffer, stale, renewals, withdrawn, state, ids } = await started(6);
    stale.add(1);
    stale.add(2);
    stale.add(3);
    expect(ids(buffer.take(0))).toEqual([]); // nothing asked for: nothing checked
    expect(ids(buffer.take(1))).toEqual([4]);
    buffer.requestEnded(4); // both slots free again: two renewed claims may start at once
    const [renewal] = renewals;
    renewal?.answer([claim(1), claim(3)]); // 2 is no longer ours
    await settle();
    expect(buffer.mode).toBe("ACCEPTING");
    expect(state.ready).toBe(1);
    expect(withdrawn).toEqual([1]);
    // Still "stale" by the test's rule, but just renewed: they start.
    expect(ids(buffer.take(3))).toEqual([1, 3, 5]);
  });

  test("RECHECKING → RECHECKING: claims set aside during a renewal are renewed as soon as it settles, none ready", async () => {
    const { buffer, stale, renewals, ids } = await started(8, { concurrency: 4 }); // 1..8 ready
    stale.add(1);
    expect(ids(buffer.take(1))).toEqual([2]);
    // Every other claim is found stale while 1 is being renewed: none is left ready.
    for (const id of [3, 4, 5, 6, 7, 8]) stale.add(id);
    expect(ids(buffer.take(3))).toEqual([]);
    renewals[0]?.answer([claim(1)]);
    await settle();
    // Nothing else would start their renewal (take() finds nothing ready to check).
    expect(buffer.mode).toBe("RECHECKING");
    expect(renewals.map((r) => ids(r.claims))).toEqual([[1], [3, 4, 5, 6, 7, 8]]);
    expect(ids(buffer.take(1))).toEqual([1]); // the renewed one still goes first
  });

  test("holding() names every claim held (ready, set aside, being renewed) and handed out until handled", async () => {
    const { buffer, stale, ids } = await started(8, { concurrency: 4 }); // 1..8 ready
    stale.add(1);
    expect(ids(buffer.take(1))).toEqual([2]); // 1 being renewed
    stale.add(3);
    expect(ids(buffer.take(1))).toEqual([4]); // 3 set aside
    expect([...buffer.holding()].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(buffer.held).toBe(6);
    buffer.requestEnded(2);
    expect(buffer.inFlight).toBe(1);
    buffer.handled(2);
    expect([...buffer.holding()].sort((a, b) => a - b)).toEqual([1, 3, 4, 5, 6, 7, 8]);
    expect(buffer.handedOut).toBe(1);
  });

  test("RECHECKING → ACCEPTING after a failed renewal: its claims are given back", async () => {
    const { buffer, stale, renewals, released } = await started(6);
    stale.add(1);
    buffer.take(1);
    renewals[0]?.answer(new Error("deadlock detected"));
    await settle();
    expect(buffer.mode).toBe("ACCEPTING");
    expect(released).toEqual([1]);
  });

  test("ACCEPTING → GATED while the database is unreachable: nothing goes out; → ACCEPTING when it answers", async () => {
    const { buffer, state, databaseBack, ids } = await started(6);
    state.reachable = false;
    expect(buffer.take(2)).toEqual([]);
    expect(buffer.mode).toBe("GATED");
    expect(buffer.take(2)).toEqual([]);
    databaseBack();
    await settle();
    expect(buffer.mode).toBe("ACCEPTING");
    expect(state.ready).toBe(1);
    expect(ids(buffer.take(2))).toEqual([1, 2]);
  });

  test("GATED while a result waits to be written, even with the database answering; claims wait too", async () => {
    const { buffer, gate, state } = await started(6, { due: 20 });
    buffer.take(6);
    const written = gate.holdResult();
    expect(buffer.held).toBe(0);
    expect(buffer.take(1)).toEqual([]);
    expect(buffer.mode).toBe("GATED");
    written();
    await settle();
    expect(buffer.mode).toBe("ACCEPTING");
    expect(state.ready).toBe(1);
  });

  test("RECHECKING is not left for GATED: the renewal settles first, then the gate is entered", async () => {
    const { buffer, stale, state, renewals } = await started(6);
    stale.add(1);
    buffer.take(1);
    state.reachable = false;
    expect(buffer.take(1)).toEqual([]);
    expect(buffer.mode).toBe("RECHECKING");
    renewals[0]?.answer([claim(1)]);
    await settle();
    expect(buffer.mode).toBe("ACCEPTING");
    expect(buffer.take(1)).toEqual([]);
    expect(buffer.mode).toBe("GATED");
  });

  test("GATED forgets which claims were just renewed: after the gate opens they are checked again", async () => {
    const { buffer, stale, state, renewals, databaseBack, ids } = await started(6);
    stale.add(1);
    buffer.take(1);
    renewals[0]?.answer([claim(1)]);
    await settle();
    expect(buffer.mode).toBe("ACCEPTING");
    // Renewed, then the database goes away before claim 1 is taken: the outage can last long
    // past the freshness of the values it was renewed with.
    state.reachable = false;
    expect(buffer.take(1)).toEqual([]);
    expect(buffer.mode).toBe("GATED");
    databaseBack();
    await settle();
    expect(buffer.mode).toBe("ACCEPTING");
    // Still stale by the test's rule: set aside for a new renewal, not handed out as renewed.
    expect(ids(buffer.take(1))).toEqual([3]);
    expect(renewals.map((r) => ids(r.claims))).toEqual([[1], [1]]);
  });

  test("→ DRAINING → STOPPED: drain() gives back what is held at once, and a renewal's claims when it settles", async () => {
    const { buffer, stale, renewals, released } = await started(6);
    stale.add(1);
    buffer.take(1); // 2 goes out, 1 is being renewed
    const drained = buffer.drain();
    expect(buffer.mode).toBe("DRAINING");
    await settle();
    expect(released.sort((a, b) => a - b)).toEqual([3, 4, 5, 6]);
    renewals[0]?.answer([claim(1)]);
    await drained;
    expect(released.sort((a, b) => a - b)).toEqual([1, 3, 4, 5, 6]);
    expect(buffer.mode).toBe("STOPPED");
    expect(buffer.held).toBe(0);
  });

  test("→ DRAINING from GATED ends the wait for the database; the buffer can start again", async () => {
    const { buffer, state, released } = await started(6);
    state.reachable = false;
    buffer.take(1);
    await buffer.drain();
    expect(buffer.mode).toBe("STOPPED");
    expect(released).toHaveLength(6);
    state.reachable = true;
    buffer.start();
    expect(buffer.mode).toBe("ACCEPTING");
  });
});
