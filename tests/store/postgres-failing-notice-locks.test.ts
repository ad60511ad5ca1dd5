import { expect, test } from "bun:test";
import { SQL } from "bun";
import { openPostgresStore } from "../../lib/store/postgres/store.ts";
import { describePostgres, usePostgresCluster } from "../fakes/postgres-cluster.ts";
import { change, record } from "./contract.ts";

/**
 * The failing notice is written in the statement that records results, which then locks the
 * webhook rows whose notice changes. A claim's send slots lock webhook rows in id order (so two
 * claims cannot deadlock); the results' statement must take its webhook locks in that order too.
 */
describePostgres("PostgreSQL failing notices and webhook row locks", () => {
  const pg = usePostgresCluster();
  const { cleanups } = pg;

  test("finishMany() takes the webhook locks of its failing notices in id order: a transaction locking them in id order meanwhile is not deadlocked", async () => {
    const url = await pg.cluster.createDatabase();
    const store = await openPostgresStore(url, { reconnectWaitMs: 0 });
    cleanups.push(() => store.close());
    const admin = new SQL(url, { max: 2 });
    cleanups.push(() => admin.close());
    const first = await store.webhooks.create({
      name: "first",
      url: "https://e.example/1",
      failingNoticeAfter: 1,
    });
    const second = await store.webhooks.create({
      name: "second",
      url: "https://e.example/2",
      failingNoticeAfter: 1,
    });
    // Others with no part in it, so the planner scans the table rather than looking each up.
    for (let i = 0; i < 20; i++) {
      await store.webhooks.create({
        name: `other-${i}`,
        url: "https://e.example/other",
        events: ["item.deleted"],
      });
    }
    // One subscriber, so the notices are recorded as events too.
    await store.webhooks.create({
      name: "ops",
      url: "https://e.example/ops",
      events: ["webhook.failing"],
    });
    await store.queue.enqueue(change());
    const claims = (
      await store.queue.claim({ workerId: "w1", limit: 10, leaseMs: 60_000, now: Date.now() })
    ).filter((c) => c.webhook.id === first.id || c.webhook.id === second.id);
    expect(claims).toHaveLength(2);
    // As a busy webhook's row is after its updates: the first's newest version after the
    // second's, so a scan of the table meets the second first.
    await admin`UPDATE webhooks SET updated_at = updated_at + 1 WHERE id = ${first.id}`;
    await admin`ANALYZE webhooks`;

    // Another transaction as a claim's send slots take them: the first webhook, then the second.
    const firstLocked = Promise.withResolvers<void>();
    const go = Promise.withResolvers<void>();
    const other = admin.begin(async (tx) => {
      await tx`SELECT id FROM webhooks WHERE id = ${first.id} FOR UPDATE`;
      firstLocked.resolve();
      await go.promise;
      await tx`SELECT id FROM webhooks WHERE id = ${second.id} FOR UPDATE`;
    });
    await Promise.race([firstLocked.promise, other]);

    const failed = record({ statusCode: 500, outcome: "http_error", error: "HTTP 500" });
    const finishing = store.queue.finishMany(
      claims.map((claim) => ({
        claim,
        record: failed,
        outcome: { state: "queued" as const, nextAttemptAt: Date.now() + 60_000 },
      })),
    );
    // Each round trip lets the results' statement go on; it ends once it waits for a lock (its
    // text is cut at 1 kB in pg_stat_activity: known by its input).
    let waiting = false;
    for (let i = 0; i < 2000 && !waiting; i++) {
      const rows = await admin`
        SELECT pid FROM pg_stat_activity
        WHERE wait_event_type = 'Lock' AND query LIKE '%jsonb_to_recordset%'
          AND pid <> pg_backend_pid()`;
      waiting = rows.length > 0;
    }
    go.resolve();
    expect(waiting).toBe(true);

    const [otherResult, finished] = await Promise.allSettled([other, finishing]);
    expect(otherResult.status).toBe("fulfilled");
    expect(finished).toEqual({ status: "fulfilled", value: [true, true] });
    const noticed = await admin`
      SELECT count(*)::int AS n FROM webhooks WHERE failing_noticed_at IS NOT NULL`;
    expect(noticed[0].n).toBe(2);
  });
});
