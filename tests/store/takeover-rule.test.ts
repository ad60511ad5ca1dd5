import { describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { openPostgresStore } from "../../lib/store/postgres/store.ts";
import { mayTakeOver, type TakeoverFacts } from "../../lib/webhooks/delivery/lease.ts";
import type { Store } from "../../lib/webhooks/ports.ts";
import { change } from "../fakes/change.ts";
import { describePostgres, usePostgresCluster } from "../fakes/postgres-cluster.ts";
import { openSqliteDb } from "../fakes/sqlite-db.ts";

/**
 * The takeover rule as one table: each case is judged by mayTakeOver() (webhooks/lease.ts) and
 * played on each store (a delivery leased by "owner", the heartbeat and outage rows as the case
 * says, then a claim by another worker, or by the owner itself when it still handles it), and
 * all three must agree with the expected answer.
 */
const NOW = 1_700_000_100_000;
const HELD: TakeoverFacts["owner"] = { lastSeenAt: NOW - 1000, heartbeatMs: 5000 };
const NONE = { backAt: 0, graceUntil: 0 };
/** An outage that ended 10 s ago, its grace running 20 s more. */
const RECENT = { backAt: NOW - 10_000, graceUntil: NOW + 20_000 };

/** The claimer's lease, the lease every case's delivery was leased with. */
const LEASE_MS = 10_000;
/** A lease that ran out longer ago than one more lease: only a grace can hold it. */
const LONG_AGO = NOW - 20_000;

type Facts = Omit<TakeoverFacts, "now" | "leaseMs">;

const CASES: Array<[string, Facts, boolean]> = [
  [
    "a lease still running is never taken",
    { leaseExpiresAt: NOW + 1, outage: NONE, owner: null, heldByClaimer: false },
    false,
  ],
  [
    "a lease that runs out now, its owner gone, is taken",
    { leaseExpiresAt: NOW, outage: NONE, owner: null, heldByClaimer: false },
    true,
  ],
  [
    "a live owner keeps a lease that runs out now",
    { leaseExpiresAt: NOW, outage: NONE, owner: HELD, heldByClaimer: false },
    false,
  ],
  [
    "no outage noted: a live owner keeps an expired lease for one more lease",
    { leaseExpiresAt: NOW - 5000, outage: NONE, owner: HELD, heldByClaimer: false },
    false,
  ],
  [
    "no outage noted: a live owner's lease is taken one lease after it ran out",
    { leaseExpiresAt: NOW - LEASE_MS, outage: NONE, owner: HELD, heldByClaimer: false },
    true,
  ],
  [
    "an owner silent three beats is gone: its lease is taken as soon as it runs out",
    {
      leaseExpiresAt: NOW - 1,
      outage: NONE,
      owner: { lastSeenAt: NOW - 16_000, heartbeatMs: 5000 },
      heldByClaimer: false,
    },
    true,
  ],
  [
    "in the grace after an outage, a live owner keeps its lease past the one more lease",
    { leaseExpiresAt: LONG_AGO, outage: RECENT, owner: HELD, heldByClaimer: false },
    false,
  ],
  [
    "in the grace, an owner without a heartbeat row is gone",
    { leaseExpiresAt: LONG_AGO, outage: RECENT, owner: null, heldByClaimer: false },
    true,
  ],
  [
    "in the grace, an owner silent three beats since the outage's end is gone",
    {
      leaseExpiresAt: LONG_AGO,
      outage: { backAt: NOW - 20_000, graceUntil: NOW + 10_000 },
      owner: { lastSeenAt: NOW - 30_000, heartbeatMs: 5000 },
      heldByClaimer: false,
    },
    true,
  ],
  [
    "the outage's end counts as a beat: an owner silent through it is not gone yet",
    {
      leaseExpiresAt: LONG_AGO,
      outage: RECENT,
      owner: { lastSeenAt: NOW - 60_000, heartbeatMs: 5000 },
      heldByClaimer: false,
    },
    false,
  ],
  [
    "exactly three beats of silence: not gone yet",
    {
      leaseExpiresAt: LONG_AGO,
      outage: { backAt: NOW - 20_000, graceUntil: NOW + 10_000 },
      owner: { lastSeenAt: NOW - 3000, heartbeatMs: 1000 },
      heldByClaimer: false,
    },
    false,
  ],
  [
    "an owner that never said how often it beats is judged by the default 5 s",
    {
      leaseExpiresAt: LONG_AGO,
      outage: { backAt: NOW - 20_000, graceUntil: NOW + 10_000 },
      owner: { lastSeenAt: NOW - 16_000, heartbeatMs: null },
      heldByClaimer: false,
    },
    true,
  ],
  [
    "the grace ends when its time comes: a live owner's lease, one lease past, is taken",
    {
      leaseExpiresAt: LONG_AGO,
      outage: { backAt: NOW - 30_000, graceUntil: NOW },
      owner: HELD,
      heldByClaimer: false,
    },
    true,
  ],
  [
    "the grace over, a live owner still keeps its lease for one more lease",
    {
      leaseExpiresAt: NOW - 5000,
      outage: { backAt: NOW - 30_000, graceUntil: NOW - 20_000 },
      owner: HELD,
      heldByClaimer: false,
    },
    false,
  ],
  [
    "the claimer's own lease is not taken while it still handles the delivery",
    { leaseExpiresAt: LONG_AGO, outage: NONE, owner: HELD, heldByClaimer: true },
    false,
  ],
];

/** The stores' clock: the time of the lease while it is taken, then NOW. */
const clock = { t: NOW, now: () => clock.t };

/** Plays one case on `store`; `setOutage` writes the outages row. Whether the claim took it. */
async function playCase(
  store: Store,
  setOutage: (outage: TakeoverFacts["outage"]) => Promise<void>,
  facts: Facts,
): Promise<boolean> {
  const leasedAt = facts.leaseExpiresAt - LEASE_MS;
  clock.t = leasedAt;
  await store.webhooks.create({ name: "a", url: "https://e.example/1" });
  const [id] = await store.queue.enqueue(change());
  const [held] = await store.queue.claim({
    workerId: "owner",
    limit: 1,
    leaseMs: LEASE_MS,
    now: leasedAt,
  });
  expect(held?.delivery.id).toBe(id ?? -1);
  const beat = { host: "h", pid: 1, version: "0", startedAt: 0, inFlight: 1, concurrency: 1 };
  if (facts.owner) {
    const { lastSeenAt, heartbeatMs } = facts.owner;
    await store.workers.heartbeat({
      ...beat,
      id: "owner",
      lastSeenAt,
      ...(heartbeatMs === null ? {} : { heartbeatMs }),
    });
  }
  // A worker beating now: the database shows no silence, so the claim notes no outage itself.
  await store.workers.heartbeat({ ...beat, id: "bystander", lastSeenAt: NOW, heartbeatMs: 1000 });
  await setOutage(facts.outage);
  clock.t = NOW;
  const claimer = facts.heldByClaimer ? "owner" : "claimer";
  const claims = await store.queue.claim({
    workerId: claimer,
    limit: 10,
    leaseMs: LEASE_MS,
    now: NOW,
    holding: facts.heldByClaimer ? new Set([id ?? -1]) : undefined,
  });
  return claims.some((claim) => claim.delivery.id === id);
}

describe("the takeover rule", () => {
  for (const [name, facts, expected] of CASES) {
    test(`mayTakeOver(): ${name}`, () => {
      expect(mayTakeOver({ ...facts, now: NOW, leaseMs: LEASE_MS })).toBe(expected);
    });
  }
  for (const [name, facts, expected] of CASES) {
    test(`SQLite claim: ${name}`, async () => {
      const { db, store } = openSqliteDb({ now: clock.now });
      const setOutage = async (outage: TakeoverFacts["outage"]) => {
        db.run("UPDATE outages SET back_at = ?1, grace_until = ?2 WHERE id = 1", [
          outage.backAt,
          outage.graceUntil,
        ]);
      };
      try {
        expect(await playCase(store, setOutage, facts)).toBe(expected);
      } finally {
        await store.close();
      }
    });
  }
});

describePostgres("the takeover rule, PostgreSQL", () => {
  const pg = usePostgresCluster();
  for (const [name, facts, expected] of CASES) {
    test(`PostgreSQL claim: ${name}`, async () => {
      const url = await pg.cluster.createDatabase();
      const store = await openPostgresStore(url, { now: clock.now });
      const sql = new SQL(url);
      const setOutage = async (outage: TakeoverFacts["outage"]) => {
        await sql`UPDATE outages SET back_at = ${outage.backAt}, grace_until = ${outage.graceUntil} WHERE id = 1`;
      };
      try {
        expect(await playCase(store, setOutage, facts)).toBe(expected);
      } finally {
        await sql.close();
        await store.close();
      }
    });
  }
});
