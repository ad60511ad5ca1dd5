import { afterAll, beforeAll, expect, test } from "bun:test";
import { SQL } from "bun";
import { OPS_MIGRATION_POSTGRES } from "../../lib/store/ops-migration-sql.ts";
import { MIGRATIONS, migrate } from "../../lib/store/postgres/migrations.ts";
import * as pg from "../../lib/store/postgres/ops-sql.ts";
import { openPostgresStore } from "../../lib/store/postgres/store.ts";
import { createEndpointHealth } from "../../lib/webhooks/policy/endpoint-health.ts";
import { RATE_HORIZON_MS, reserveSlots } from "../../lib/webhooks/policy/rate-limit.ts";
import type { HealthStore } from "../../lib/webhooks/ports.ts";
import { createFakeClock } from "../fakes/fake-clock.ts";
import { attemptRecord, itemChange } from "../fakes/ops-world.ts";
import {
  describePostgres,
  type PostgresCluster,
  startPostgresCluster,
} from "../fakes/postgres-cluster.ts";

const T0 = Date.UTC(2025, 0, 1);
const num = (value: unknown) => (value === null ? null : Number(value));

/** The HealthStore the PostgreSQL store would build from the statements in postgres-sql.ts. */
function postgresHealthStore(sql: SQL): HealthStore {
  return {
    async recordSuccess(id) {
      const [row] = await sql.unsafe(pg.STREAK_POSTGRES, [id]);
      if (row && row.failing_since !== null) await sql.unsafe(pg.CLEAR_STREAK_POSTGRES, [id]);
    },
    async recordFailure(id, { now, deliveryFailed }) {
      const [row] = await sql.unsafe(pg.EXTEND_STREAK_POSTGRES, [id, now, deliveryFailed ? 1 : 0]);
      if (!row) return null;
      return {
        streakStartedAt: num(row.failing_since),
        failedDeliveries: Number(row.failed_deliveries),
      };
    },
    async disable(id, { reason, now }) {
      const result = await sql.unsafe(pg.DISABLE_WEBHOOK_POSTGRES, [id, reason, now]);
      return result.count > 0;
    },
  };
}

describePostgres("the operability SQL on PostgreSQL", () => {
  let cluster: PostgresCluster;
  beforeAll(async () => {
    cluster = await startPostgresCluster();
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  async function setup() {
    const url = await cluster.createDatabase();
    const sql = new SQL(url, { max: 4 });
    // Until the integrator appends migration 2 to the store's list, apply it here.
    const migrations = MIGRATIONS.includes(OPS_MIGRATION_POSTGRES)
      ? MIGRATIONS
      : [...MIGRATIONS, OPS_MIGRATION_POSTGRES];
    expect(await migrate(sql, migrations)).toBe(migrations.length);
    const clock = createFakeClock(T0);
    const store = await openPostgresStore(url, { now: clock.now });
    return {
      sql,
      store,
      clock,
      [Symbol.asyncDispose]: async () => {
        await store.close();
        await sql.close();
      },
    };
  }

  test("migration 2 applies after migration 1 and health streaks work through it", async () => {
    await using world = await setup();
    const { sql, store, clock } = world;
    const hook = await store.webhooks.create({ name: "a", url: "https://example.com/a" });
    const [fresh] = await sql`SELECT failing_since, failed_deliveries, paused_until, next_send_at
      FROM webhooks WHERE id = ${hook.id}`;
    expect([
      fresh.failing_since,
      fresh.failed_deliveries,
      num(fresh.paused_until),
      fresh.next_send_at,
    ]).toEqual([null, 0, 0, 0]);

    const health = createEndpointHealth({ store: postgresHealthStore(sql), now: clock.now });
    const failed = { state: "failed" } as const;
    expect(
      await health.afterAttempt({ webhook: hook, record: attemptRecord(500), outcome: failed }),
    ).toBeNull();
    const failing = await store.webhooks.get(hook.id);
    expect(failing).toMatchObject({ enabled: true, failingSince: T0 });
    await health.afterAttempt({
      webhook: failing ?? hook,
      record: attemptRecord(200),
      outcome: { state: "successful" },
    });
    const [cleared] = await sql`SELECT failing_since, failed_deliveries FROM webhooks`;
    expect(cleared).toEqual({ failing_since: null, failed_deliveries: 0 });

    expect(
      await health.afterAttempt({ webhook: hook, record: attemptRecord(410), outcome: failed }),
    ).toBe("Disabled automatically: the endpoint answered 410 Gone");
    const gone = await store.webhooks.get(hook.id);
    expect([gone?.enabled, gone?.disabledAt]).toEqual([false, T0]);
    expect(
      await postgresHealthStore(sql).recordFailure(hook.id, { now: T0, deliveryFailed: true }),
    ).toBeNull();
  });

  test("pause, send slots and the next-due query gate a webhook as on SQLite", async () => {
    await using world = await setup();
    const { sql, store } = world;
    const busy = await store.webhooks.create({ name: "busy", url: "https://example.com/b" });
    const idle = await store.webhooks.create({
      name: "idle",
      url: "https://example.com/i",
      events: ["item.deleted"],
    });
    await store.queue.enqueue(itemChange(1));
    expect(num((await sql.unsafe(pg.NEXT_QUEUED_DUE_POSTGRES, [RATE_HORIZON_MS]))[0].t)).toBe(T0);

    const until = T0 + 120_000;
    expect((await sql.unsafe(pg.PAUSE_WEBHOOK_POSTGRES, [busy.id, until])).count).toBe(1);
    expect((await sql.unsafe(pg.PAUSE_WEBHOOK_POSTGRES, [busy.id, T0 + 5])).count).toBe(0);
    // The idle webhook has nothing queued: GREATEST must not turn its NULL into a due time.
    expect(num((await sql.unsafe(pg.NEXT_QUEUED_DUE_POSTGRES, [RATE_HORIZON_MS]))[0].t)).toBe(
      until - RATE_HORIZON_MS,
    );
    const sendable = (now: number) =>
      sql.unsafe(
        `SELECT w.id FROM webhooks w WHERE w.enabled AND ${pg.SENDABLE_WEBHOOK_POSTGRES} ORDER BY id`,
        [now, RATE_HORIZON_MS],
      );
    expect((await sendable(T0)).map((r: { id: string }) => Number(r.id))).toEqual([idle.id]);
    expect(
      (await sendable(until - RATE_HORIZON_MS)).map((r: { id: string }) => Number(r.id)),
    ).toEqual([busy.id, idle.id]);

    // Admission: lock the gates, reserve in JS, write back, all in one transaction.
    await sql`UPDATE webhooks SET max_per_second = 4, paused_until = 0`;
    const slots = await sql.begin(async (tx) => {
      const gates = await tx.unsafe(pg.LOCK_SEND_GATES_POSTGRES, [[busy.id, idle.id]]);
      const out: number[] = [];
      for (const row of gates) {
        const reserved = reserveSlots(
          {
            maxPerSecond: row.max_per_second,
            nextSendAt: row.next_send_at,
            pausedUntil: Number(row.paused_until),
          },
          { now: T0, wanted: 3 },
        );
        await tx.unsafe(pg.SET_NEXT_SEND_POSTGRES, [row.id, reserved.nextSendAt]);
        if (Number(row.id) === busy.id) out.push(...reserved.slots);
      }
      return out;
    });
    expect(slots).toEqual([T0, T0 + 250, T0 + 500]);
    const [gate] = await sql`SELECT next_send_at FROM webhooks WHERE id = ${busy.id}`;
    expect(gate.next_send_at).toBe(T0 + 750);
  });

  test("due summary, attempts after an id and one purge batch", async () => {
    await using world = await setup();
    const { sql, store, clock } = world;
    await store.webhooks.create({ name: "a", url: "https://example.com/a" });
    for (let n = 0; n < 5; n++) await store.queue.enqueue(itemChange(n));
    const claims = await store.queue.claim({
      workerId: "w",
      limit: 3,
      leaseMs: 1_000,
      now: clock.now(),
    });
    for (const claim of claims.slice(0, 2)) {
      await store.queue.finish(claim, attemptRecord(200), { state: "successful" });
    }
    clock.advance(5_000);
    const [due] = await sql.unsafe(pg.DUE_SUMMARY_POSTGRES, [clock.now()]);
    expect([due.n, num(due.oldest)]).toEqual([3, T0]);

    const [last] = await sql.unsafe(pg.LAST_ATTEMPT_ID_POSTGRES);
    const after = await sql.unsafe(pg.ATTEMPTS_AFTER_POSTGRES, [0, 10]);
    expect(after.map((row: { outcome: string }) => row.outcome)).toEqual(["success", "success"]);
    expect(Number(last.id)).toBe(Number(after[1].id));

    const purged = await sql.unsafe(pg.PURGE_BATCH_POSTGRES, [clock.now(), 1]);
    expect(purged.count).toBe(1);
    const [left] = await sql`SELECT count(*)::int AS n FROM deliveries WHERE state = 'successful'`;
    expect(left.n).toBe(1);
  });
});
