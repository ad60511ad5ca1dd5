import type { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { createMemoryLogger } from "../../../lib/log.ts";
import { createSqliteHealthStore } from "../../../lib/store/sqlite/health.ts";
import {
  type AutoDisableSettings,
  createWebhookHealth,
  DEFAULT_AUTO_DISABLE,
  shouldDisable,
} from "../../../lib/webhooks/policy/webhook-health.ts";
import { itemChange } from "../../fakes/change.ts";
import { attemptRecord, completeClaim } from "../../fakes/delivery.ts";
import { createFakeClock } from "../../fakes/fake-clock.ts";
import { useSqliteDbs } from "../../fakes/sqlite-db.ts";

const HOUR = 3_600_000;
const T0 = Date.UTC(2025, 0, 1);

describe("shouldDisable()", () => {
  const failing = (hours: number, failedDeliveries: number, lastStatus: number | null = 500) => ({
    streakStartedAt: T0,
    failedDeliveries,
    now: T0 + hours * HOUR,
    lastStatus,
  });

  test("keeps a webhook whose failures are shorter than 24 h or fewer than 10 deliveries", () => {
    expect(shouldDisable(failing(23.99, 500))).toBeNull();
    expect(shouldDisable(failing(48, 9))).toBeNull();
    expect(
      shouldDisable({ streakStartedAt: null, failedDeliveries: 0, now: T0, lastStatus: 500 }),
    ).toBeNull();
  });

  test("disables after 24 h of failed attempts and 10 failed deliveries, saying why", () => {
    expect(shouldDisable(failing(24, 10))).toBe(
      "Disabled automatically: every attempt failed for 24 h since 2025-01-01T00:00:00.000Z (10 failed deliveries; last answer HTTP 500)",
    );
    expect(shouldDisable(failing(30.5, 12, null))).toBe(
      "Disabled automatically: every attempt failed for 30 h since 2025-01-01T00:00:00.000Z (12 failed deliveries)",
    );
  });

  test("disables at once on 410 Gone, streak or not", () => {
    const gone = { streakStartedAt: null, failedDeliveries: 0, now: T0, lastStatus: 410 };
    expect(shouldDisable(gone)).toBe("Disabled automatically: the endpoint answered 410 Gone");
  });

  test("follows its settings: turned off, shorter streaks, 410 ignored", () => {
    const off: AutoDisableSettings = { ...DEFAULT_AUTO_DISABLE, enabled: false };
    expect(shouldDisable(failing(100, 100, 410), off)).toBeNull();
    const quick: AutoDisableSettings = {
      enabled: true,
      failingForMs: HOUR / 2,
      minFailedDeliveries: 2,
      onGone: false,
    };
    expect(shouldDisable(failing(0.5, 2), quick)).toBe(
      "Disabled automatically: every attempt failed for 0.5 h since 2025-01-01T00:00:00.000Z (2 failed deliveries; last answer HTTP 500)",
    );
    expect(shouldDisable(failing(0, 0, 410), quick)).toBeNull();
  });
});

describe("endpoint health on the SQLite store", () => {
  const openDb = useSqliteDbs();

  function setup() {
    const clock = createFakeClock(T0);
    const { db, store } = openDb({ now: clock.now });
    const logger = createMemoryLogger();
    const health = createWebhookHealth({
      store: createSqliteHealthStore(db),
      now: clock.now,
      logger,
    });
    const claimOne = async () =>
      (await store.queue.claim({ workerId: "w1", limit: 1, leaseMs: 60_000, now: clock.now() }))[0];
    return { clock, db, store, health, logger, claimOne };
  }

  function streakOf(db: Database, id: number) {
    return db
      .query<{ failing_since: number | null; failed_deliveries: number }, [number]>(
        "SELECT failing_since, failed_deliveries FROM webhooks WHERE id = ?",
      )
      .get(id);
  }

  test("disables a webhook after 24 h of failures and 10 failed deliveries; its queue waits and resumes on re-enable", async () => {
    const { clock, db, store, health, logger, claimOne } = setup();
    const hook = await store.webhooks.create({ name: "orders", url: "https://example.com/h" });

    // One change an hour, every attempt answered 500: not disabled before the 24th hour.
    for (let hour = 0; hour < 24; hour++) {
      await store.queue.enqueue(itemChange(hour));
      const claim = await claimOne();
      if (!claim) throw new Error("nothing to claim");
      await completeClaim(store, claim, attemptRecord(500), health);
      expect((await store.webhooks.get(hook.id))?.enabled).toBe(true);
      clock.advance(HOUR);
    }
    expect(streakOf(db, hook.id)).toEqual({ failing_since: T0, failed_deliveries: 24 });

    // Hour 24: three changes queued; the first failure disables, the other two wait.
    for (let n = 0; n < 3; n++) await store.queue.enqueue(itemChange(100 + n));
    const claim = await claimOne();
    if (!claim) throw new Error("nothing to claim");
    await completeClaim(store, claim, attemptRecord(500), health);

    const disabled = await store.webhooks.get(hook.id);
    expect(disabled?.enabled).toBe(false);
    expect(disabled?.disabledAt).toBe(T0 + 24 * HOUR);
    expect(disabled?.disabledReason).toBe(
      "Disabled automatically: every attempt failed for 24 h since 2025-01-01T00:00:00.000Z (25 failed deliveries; last answer HTTP 500)",
    );
    expect(logger.lines).toEqual([`warn Webhook "orders": ${disabled?.disabledReason}`]);
    expect(await claimOne()).toBeUndefined();
    expect((await store.queue.stats()).queued).toBe(2);

    // Re-enabled by a person: the two waiting deliveries go out, and one more failure does not
    // disable it again (the streak was cleared when it was disabled).
    await store.webhooks.update(hook.id, { enabled: true });
    const resumed = await claimOne();
    expect(resumed?.delivery.event).toBe("item.updated");
    if (!resumed) throw new Error("nothing to claim");
    await completeClaim(store, resumed, attemptRecord(500), health);
    expect((await store.webhooks.get(hook.id))?.enabled).toBe(true);
    expect(streakOf(db, hook.id)).toEqual({
      failing_since: T0 + 24 * HOUR,
      failed_deliveries: 1,
    });
    const last = await claimOne();
    if (!last) throw new Error("nothing to claim");
    await completeClaim(store, last, attemptRecord(200), health);
    expect((await store.queue.stats()).successful).toBe(1);
  });

  test("any success ends the streak, so failures must start over", async () => {
    const { clock, db, store, health, claimOne } = setup();
    const hook = await store.webhooks.create({ name: "flaky", url: "https://example.com/h" });
    for (let n = 0; n < 12; n++) await store.queue.enqueue(itemChange(n));
    for (let n = 0; n < 11; n++) {
      const claim = await claimOne();
      if (!claim) throw new Error("nothing to claim");
      await completeClaim(store, claim, attemptRecord(503), health);
      clock.advance(2 * HOUR);
    }
    expect(streakOf(db, hook.id)).toEqual({ failing_since: T0, failed_deliveries: 11 });
    const claim = await claimOne();
    if (!claim) throw new Error("nothing to claim");
    await completeClaim(store, claim, attemptRecord(200), health);
    expect(streakOf(db, hook.id)).toEqual({ failing_since: null, failed_deliveries: 0 });
    expect((await store.webhooks.get(hook.id))?.enabled).toBe(true);
  });

  test("a retried delivery's failed attempts extend the streak but count as one failed delivery only when it gives up", async () => {
    const { clock, db, store } = setup();
    const hook = await store.webhooks.create({ name: "retrying", url: "https://example.com/h" });
    const healthStore = createSqliteHealthStore(db);
    const health = createWebhookHealth({ store: healthStore, now: clock.now });
    const timedOut = { webhook: hook, streak: "extend", lastStatus: null } as const;
    await health.afterAttempt({ ...timedOut, deliveryFailed: false });
    clock.advance(1000);
    await health.afterAttempt({ ...timedOut, deliveryFailed: true });
    expect(streakOf(db, hook.id)).toEqual({ failing_since: T0, failed_deliveries: 1 });
  });

  test("a 410 Gone disables at once and keeps the rest of the queue", async () => {
    const { store, health, claimOne } = setup();
    const hook = await store.webhooks.create({ name: "gone", url: "https://example.com/h" });
    await store.queue.enqueue(itemChange(1));
    await store.queue.enqueue(itemChange(2));
    const claim = await claimOne();
    if (!claim) throw new Error("nothing to claim");
    await completeClaim(store, claim, attemptRecord(410), health);
    const gone = await store.webhooks.get(hook.id);
    expect(gone?.enabled).toBe(false);
    expect(gone?.disabledReason).toBe("Disabled automatically: the endpoint answered 410 Gone");
    expect(await claimOne()).toBeUndefined();
    expect((await store.queue.stats()).queued).toBe(1);
  });

  test("a failure that arrives after the webhook was disabled changes nothing", async () => {
    const { db, store, health } = setup();
    const hook = await store.webhooks.create({ name: "off", url: "https://example.com/h" });
    await store.webhooks.update(hook.id, { enabled: false, disabledReason: "Paused by Ana" });
    const reason = await health.afterAttempt({
      webhook: hook,
      streak: "extend",
      deliveryFailed: true,
      lastStatus: 410,
    });
    expect(reason).toBeNull();
    expect(streakOf(db, hook.id)).toEqual({ failing_since: null, failed_deliveries: 0 });
    expect((await store.webhooks.get(hook.id))?.disabledReason).toBe("Paused by Ana");
  });

  test("a success ends the streak it was judged to end", async () => {
    const { db, store, health } = setup();
    const hook = await store.webhooks.create({ name: "fast", url: "https://example.com/h" });
    await createSqliteHealthStore(db).recordFailure(hook.id, { now: T0, deliveryFailed: true });
    await health.afterAttempt({
      webhook: hook,
      streak: "end",
      deliveryFailed: false,
      lastStatus: 200,
    });
    expect(streakOf(db, hook.id)).toEqual({ failing_since: null, failed_deliveries: 0 });
  });

  test("a success on a healthy webhook changes no row", async () => {
    const { db, store, health } = setup();
    const hook = await store.webhooks.create({ name: "fine", url: "https://example.com/h" });
    const changes = () => db.query<{ n: number }, []>("SELECT total_changes() AS n").get()?.n ?? -1;
    const before = changes();
    await health.afterAttempt({
      webhook: hook,
      streak: "end",
      deliveryFailed: false,
      lastStatus: 200,
    });
    expect(changes()).toBe(before);
  });
});
