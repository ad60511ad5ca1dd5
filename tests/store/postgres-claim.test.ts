import { expect, test } from "bun:test";
import { SQL } from "bun";
import { openPostgresStore } from "../../lib/store/postgres/store.ts";
import type { Store } from "../../lib/webhooks/ports.ts";
import { describePostgres, usePostgresCluster } from "../fakes/postgres-cluster.ts";
import { holdRowLock } from "../fakes/row-lock.ts";
import { change } from "./contract.ts";

/**
 * A claim leases rows in one statement, then reserves send slots for rate-limited webhooks in a
 * transaction of its own. These tests make that second step fail for real (the server cancels
 * or cuts its statement) and check that the leased rows are not left waiting out their lease.
 */
describePostgres("PostgreSQL claim when send-rate admission fails", () => {
  const pg = usePostgresCluster();
  const { cleanups } = pg;

  function client(url: string): SQL {
    const sql = new SQL(url, { max: 2 });
    cleanups.push(() => sql.close());
    return sql;
  }

  async function openStore(url: string): Promise<Store> {
    // No retrying through a lost connection: a cut admission fails at once.
    const store = await openPostgresStore(url, { reconnectWaitMs: 0 });
    cleanups.push(() => store.close());
    return store;
  }

  /**
   * Holds the webhook row locked from another connection, starts a claim, waits until the
   * claim's admission waits for that lock, then applies `fault` to the waiting backend.
   */
  async function failAdmission(
    store: Store,
    url: string,
    webhookId: number,
    fault: "pg_cancel_backend" | "pg_terminate_backend",
  ): Promise<unknown> {
    const admin = client(url);
    const { unlock, holder } = await holdRowLock(
      admin,
      (tx) => tx`SELECT id FROM webhooks WHERE id = ${webhookId} FOR UPDATE`,
    );
    const claiming = store.queue
      .claim({ workerId: "w1", limit: 10, leaseMs: 60_000, now: Date.now() })
      .then(
        () => null,
        (error: unknown) => error,
      );
    // Each round trip lets the claim go on; it ends once its admission waits for the lock.
    let waiting: number | undefined;
    for (let i = 0; i < 2000 && waiting === undefined; i++) {
      const rows = await admin`
        SELECT pid FROM pg_stat_activity
        WHERE wait_event_type = 'Lock' AND query LIKE '%FROM webhooks%FOR UPDATE%'
          AND pid <> pg_backend_pid()`;
      waiting = rows[0]?.pid;
    }
    if (waiting === undefined) throw new Error("the claim's admission never waited for the lock");
    await admin.unsafe(`SELECT ${fault}($1)`, [waiting]);
    const error = await claiming;
    unlock();
    await holder;
    return error;
  }

  for (const fault of ["pg_cancel_backend", "pg_terminate_backend"] as const) {
    test(`claim() gives its leased rows back when admission fails (${fault}): claimable again at once, no lease_expired attempt`, async () => {
      const url = await pg.cluster.createDatabase();
      const store = await openStore(url);
      const limited = await store.webhooks.create({
        name: "limited",
        url: "https://e.example/1",
        maxPerSecond: 100,
      });
      await store.webhooks.create({ name: "open", url: "https://e.example/2" });
      await store.queue.enqueue(change());
      await store.queue.enqueue(change());

      const error = await failAdmission(store, url, limited.id, fault);
      expect(error).toBeInstanceOf(Error);

      const states = (await store.queue.list({})).map((d) => [d.state, d.attempts]);
      expect(states).toEqual(Array.from({ length: 4 }, () => ["queued", 0]));
      const again = await store.queue.claim({
        workerId: "w2",
        limit: 10,
        leaseMs: 60_000,
        now: Date.now(),
      });
      expect(again).toHaveLength(4);
      expect(again.map((c) => c.attempt)).toEqual([1, 1, 1, 1]);
      const [recorded] = await client(url)`SELECT count(*)::int AS n FROM attempts`;
      expect(recorded.n).toBe(0);
    });
  }
});
