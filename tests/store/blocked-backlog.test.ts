import { afterEach, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { transactionDb } from "../../lib/store/postgres/db.ts";
import { createPostgresQueue } from "../../lib/store/postgres/queue/index.ts";
import { openPostgresStore } from "../../lib/store/postgres/store.ts";
import { openSqliteStore } from "../../lib/store/sqlite/store.ts";
import type { Store } from "../../lib/webhooks/ports.ts";
import { describePostgres, usePostgresCluster } from "../fakes/postgres-cluster.ts";
import { change, T0 } from "./contract.ts";

const BACKLOG = 20_000;

/**
 * A disabled webhook with a large due backlog next to a healthy one with a single delivery:
 * the claim, the any-due check and the due summary see the healthy one only.
 */
async function blockedBacklog(store: Store, insertBacklog: (webhookId: number) => Promise<void>) {
  const blocked = await store.webhooks.create({ name: "blocked", url: "https://b.example/" });
  await insertBacklog(blocked.id);
  await store.webhooks.update(blocked.id, { enabled: false });
  const healthy = await store.webhooks.create({ name: "healthy", url: "https://h.example/" });
  const [id] = await store.queue.enqueue(change(), { webhookId: healthy.id });
  return { blocked, healthy, id };
}

describe("a blocked backlog on SQLite", () => {
  const stores: Store[] = [];
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
  });

  test("claims and due counts skip a disabled webhook's backlog", async () => {
    const store = openSqliteStore(":memory:", { now: () => T0 });
    stores.push(store);
    const { healthy, id } = await blockedBacklog(store, async (webhookId) => {
      await store.transaction(async (tx) => {
        for (let i = 0; i < 500; i++) await tx.queue.enqueue(change(), { webhookId });
      });
    });
    expect(await store.queue.dueSummary(T0)).toEqual({ count: 1, oldestDueAt: T0 });
    const claims = await store.queue.claim({ workerId: "w", limit: 8, leaseMs: 1000, now: T0 });
    expect(claims.map((c) => [c.delivery.id, c.webhook.id])).toEqual([[id ?? 0, healthy.id]]);
  });
});

describePostgres("a blocked backlog on PostgreSQL", () => {
  const pg = usePostgresCluster();
  const { cleanups } = pg;

  /** Rows of deliveries the claim read, from its transaction's own statistics (rolled back). */
  async function tuplesReadByClaim(sql: SQL): Promise<{ read: number; claimed: number[] }> {
    try {
      await sql.begin(async (tx) => {
        const queue = createPostgresQueue(transactionDb(tx), { now: () => T0 });
        const claims = await queue.claim({ workerId: "w", limit: 8, leaseMs: 1000, now: T0 });
        const [row] = await tx`
          SELECT coalesce(idx_tup_fetch, 0)::int AS idx, coalesce(seq_tup_read, 0)::int AS seq
          FROM pg_stat_xact_user_tables WHERE relname = 'deliveries'`;
        throw new Rollback({
          read: Number(row.idx) + Number(row.seq),
          claimed: claims.map((c) => c.delivery.id),
        });
      });
    } catch (error) {
      if (error instanceof Rollback) return error.value;
      throw error;
    }
    throw new Error("unreachable");
  }

  async function readByClaim(backlog: number): Promise<{ read: number; claimed: number[] }> {
    const url = await pg.cluster.createDatabase();
    const store = await openPostgresStore(url, { now: () => T0 });
    cleanups.push(() => store.close());
    const sql = new SQL(url, { max: 1 });
    cleanups.push(() => sql.close());
    const { id } = await blockedBacklog(store, async (webhookId) => {
      await sql`
        INSERT INTO deliveries (webhook_id, message_id, event, payload, state, attempts,
          next_attempt_at, created_at, updated_at)
        SELECT ${webhookId}, 'msg_' || g, 'item.created', '{}', 'queued', 0, ${T0 - backlog} + g,
          0, 0
        FROM generate_series(1, ${backlog}) g`;
    });
    await sql`ANALYZE`;
    expect(await store.queue.dueSummary(T0)).toEqual({ count: 1, oldestDueAt: T0 });
    const result = await tuplesReadByClaim(sql);
    expect(result.claimed).toEqual([id ?? 0]);
    return result;
  }

  test("the claim reads as many rows with 20,000 deliveries waiting for a disabled webhook as without", async () => {
    const without = await readByClaim(0);
    const withBacklog = await readByClaim(BACKLOG);
    // The same handful of rows either way: nothing of the backlog is read.
    expect(withBacklog.read).toBeLessThan(without.read + 50);
  });
});

class Rollback extends Error {
  constructor(readonly value: { read: number; claimed: number[] }) {
    super("rollback");
  }
}
