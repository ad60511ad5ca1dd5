import type { Database } from "bun:sqlite";
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqlite } from "../../../lib/store/sqlite/connection.ts";
import { pauseWebhook } from "../../../lib/store/sqlite/health.ts";
import {
  admitBySendRate,
  CLAIM_SQL,
  createClaim,
  SENDABLE_WEBHOOK_SQLITE,
} from "../../../lib/store/sqlite/queue/claim.ts";
import { nextQueuedDueAt } from "../../../lib/store/sqlite/queue/due.ts";
import { RATE_HORIZON_MS, slowDownUntil } from "../../../lib/webhooks/policy/rate-limit.ts";
import type { Store } from "../../../lib/webhooks/ports.ts";
import { itemChange } from "../../fakes/change.ts";
import { createFakeClock } from "../../fakes/fake-clock.ts";
import { openSqliteDb } from "../../fakes/sqlite-db.ts";

const T0 = Date.UTC(2025, 0, 1);

interface Claimed {
  id: number;
  webhookId: number;
  attempts: number;
  notBefore: number;
  workerId: string;
  claimedAt: number;
}

/**
 * A worker's claim as the store makes it (the store's own claim code on this connection): the
 * due rows of sendable webhooks, admission by send rate, then a lease on the admitted rows
 * only, all in one BEGIN IMMEDIATE transaction.
 */
function claimWithRateLimit(db: Database, workerId: string, now: number, limit: number) {
  const { claimRows } = createClaim(db, { markSeen() {}, notifyLocal() {} });
  const claim = db.transaction((): Claimed[] =>
    claimRows({ workerId, limit, leaseMs: 3_600_000, now }).map((c) => ({
      id: c.delivery.id,
      webhookId: c.webhook.id,
      attempts: c.attempt,
      notBefore: c.notBefore ?? now,
      workerId,
      claimedAt: now,
    })),
  );
  return claim.immediate();
}

const dirs: string[] = [];
const stores: Store[] = [];
const dbs: Database[] = [];
afterEach(async () => {
  for (const db of dbs.splice(0)) db.close();
  for (const store of stores.splice(0)) await store.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Two worker connections on one database file, as two worker processes have. */
function twoWorkers() {
  const dir = mkdtempSync(join(tmpdir(), "rate-limit-"));
  dirs.push(dir);
  const path = join(dir, "app.db");
  const clock = createFakeClock(T0);
  const { db, store } = openSqliteDb({ path, now: clock.now });
  stores.push(store);
  const other = openSqlite(path);
  dbs.push(other);
  return { clock, store, workers: [db, other] as const };
}

describe("the rate limit in the claim, on SQLite", () => {
  test("the store's claim query carries the gate", () => {
    expect(CLAIM_SQL.sendableDue).toContain(SENDABLE_WEBHOOK_SQLITE);
    expect(CLAIM_SQL.anyDue).toContain(SENDABLE_WEBHOOK_SQLITE);
  });

  test("two workers sharing the database send a limited webhook at its max per second, and others at once", async () => {
    const { clock, store, workers } = twoWorkers();
    const slow = await store.webhooks.create({
      name: "slow",
      url: "https://example.com/s",
      maxPerSecond: 5,
    });
    const fast = await store.webhooks.create({ name: "fast", url: "https://example.com/f" });
    for (let n = 0; n < 30; n++) await store.queue.enqueue(itemChange(n));

    const claimed: Claimed[] = [];
    for (let step = 0; step < 400 && claimed.length < 60; step++) {
      const worker = step % 2 === 0 ? "w1" : "w2";
      const db = workers[step % 2];
      if (!db) throw new Error("no worker connection");
      claimed.push(...claimWithRateLimit(db, worker, clock.now(), 8));
      clock.advance(50);
    }

    const fastOnes = claimed.filter((c) => c.webhookId === fast.id);
    expect(fastOnes).toHaveLength(30);
    // The fast webhook is not held back by the slow one's limit: all out within 16 claims.
    expect(Math.max(...fastOnes.map((c) => c.claimedAt))).toBeLessThanOrEqual(T0 + 15 * 50);
    for (const c of fastOnes) expect(c.notBefore).toBe(c.claimedAt);

    const slowOnes = claimed.filter((c) => c.webhookId === slow.id);
    expect(new Set(slowOnes.map((c) => c.id)).size).toBe(30);
    expect(new Set(slowOnes.map((c) => c.workerId))).toEqual(new Set(["w1", "w2"]));
    const slots = slowOnes.map((c) => c.notBefore).sort((a, b) => a - b);
    expect(slots[0]).toBe(T0);
    expect(slots.at(-1)).toBe(T0 + 29 * 200);
    const gaps = slots.slice(1).map((slot, i) => slot - (slots[i] ?? 0));
    expect(Math.min(...gaps)).toBe(200);
    for (const c of slowOnes) {
      expect(c.notBefore).toBeGreaterThanOrEqual(c.claimedAt);
      expect(c.notBefore).toBeLessThanOrEqual(c.claimedAt + RATE_HORIZON_MS);
    }
    // Refusals gave rows back without using up an attempt number.
    expect(slowOnes.every((c) => c.attempts === 1)).toBe(true);
  });

  test("a 429 with Retry-After pauses that webhook for every worker; the others go on", async () => {
    const { clock, store, workers } = twoWorkers();
    const [w1, w2] = workers;
    const limited = await store.webhooks.create({ name: "busy", url: "https://example.com/b" });
    const other = await store.webhooks.create({ name: "other", url: "https://example.com/o" });
    for (let n = 0; n < 3; n++) await store.queue.enqueue(itemChange(n));

    const first = claimWithRateLimit(w1, "w1", clock.now(), 2);
    expect(first.map((c) => c.webhookId)).toEqual([limited.id, other.id]);

    // The receiver answered 429 with Retry-After: 120.
    const until = slowDownUntil({ statusCode: 429, retryAfterMs: 120_000, now: clock.now() });
    expect(until).toBe(T0 + 120_000);
    expect(pauseWebhook(w1, limited.id, until ?? 0)).toBe(true);
    expect(pauseWebhook(w1, limited.id, T0 + 60_000)).toBe(false);

    clock.advance(1_000);
    const second = claimWithRateLimit(w2, "w2", clock.now(), 10);
    expect(second.map((c) => c.webhookId)).toEqual([other.id, other.id]);
    expect(claimWithRateLimit(w2, "w2", clock.now(), 10)).toEqual([]);
    expect(nextQueuedDueAt(w2)).toBe(T0 + 120_000 - RATE_HORIZON_MS);

    clock.advance(120_000 - RATE_HORIZON_MS - 1_000 - 1);
    expect(claimWithRateLimit(w2, "w2", clock.now(), 10)).toEqual([]);
    clock.advance(1);
    const resumed = claimWithRateLimit(w2, "w2", clock.now(), 10);
    expect(resumed.map((c) => [c.webhookId, c.notBefore])).toEqual([
      [limited.id, T0 + 120_000],
      [limited.id, T0 + 120_000],
    ]);
  });

  test("admitBySendRate() refuses to run outside the claim transaction", async () => {
    const { workers } = twoWorkers();
    expect(() => admitBySendRate(workers[0], [{ webhookId: 1 }], { now: T0 })).toThrow(
      "admitBySendRate must run inside the claim transaction",
    );
  });
});

describe("nextQueuedDueAt()", () => {
  test("is null on an empty queue and the earliest due time otherwise", async () => {
    const clock = createFakeClock(T0);
    const { db, store } = openSqliteDb({ now: clock.now });
    stores.push(store);
    expect(nextQueuedDueAt(db)).toBeNull();
    await store.webhooks.create({ name: "a", url: "https://example.com/a" });
    await store.queue.enqueue(itemChange(1));
    clock.advance(500);
    await store.queue.enqueue(itemChange(2));
    expect(nextQueuedDueAt(db)).toBe(T0);
  });

  test("skips disabled webhooks and waits for a rate-limited one's slot to come within the horizon", async () => {
    const clock = createFakeClock(T0);
    const { db, store } = openSqliteDb({ now: clock.now });
    stores.push(store);
    const off = await store.webhooks.create({ name: "off", url: "https://example.com/a" });
    const slow = await store.webhooks.create({
      name: "slow",
      url: "https://example.com/b",
      maxPerSecond: 0.1,
    });
    await store.queue.enqueue(itemChange(1));
    await store.webhooks.update(off.id, { enabled: false });
    db.run("UPDATE webhooks SET next_send_at = ? WHERE id = ?", [T0 + 10_000, slow.id]);
    expect(nextQueuedDueAt(db)).toBe(T0 + 10_000 - RATE_HORIZON_MS);
    await store.webhooks.update(off.id, { enabled: true });
    expect(nextQueuedDueAt(db)).toBe(T0);
  });

  test("probes the per-webhook index instead of scanning the queue", () => {
    const { db } = openSqliteDb();
    dbs.push(db);
    const plan = db
      .query<{ detail: string }, [number]>(`EXPLAIN QUERY PLAN ${CLAIM_SQL.nextQueued}`)
      .all(RATE_HORIZON_MS)
      .map((row) => row.detail)
      .join("\n");
    expect(plan).toContain("deliveries_webhook_due");
  });
});
