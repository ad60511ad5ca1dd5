import { expect, test } from "bun:test";
import { SQL } from "bun";
import { DuplicateSkuError } from "../../lib/inventory/model.ts";
import { CHANGE_CHANNEL } from "../../lib/store/postgres/changes.ts";
import { MIGRATIONS, migrate } from "../../lib/store/postgres/migrations.ts";
import { openPostgresStore } from "../../lib/store/postgres/store.ts";
import { SchemaTooNewError } from "../../lib/store/schema-version.ts";
import { createItem, updateItem } from "../../lib/webhooks/events/item-changes.ts";
import type { Store } from "../../lib/webhooks/ports.ts";
import { enqueueAndClaim } from "../fakes/delivery.ts";
import { describePostgres, usePostgresCluster } from "../fakes/postgres-cluster.ts";
import { holdRowLock } from "../fakes/row-lock.ts";
import { change, record } from "./contract.ts";

/** Behaviour only PostgreSQL has (locks, NOTIFY, concurrent migrations); the rest is contract.ts. */
describePostgres("PostgreSQL store specifics", () => {
  const pg = usePostgresCluster();
  const { cleanups } = pg;

  function client(url: string, max = 2): SQL {
    const sql = new SQL(url, { max });
    cleanups.push(() => sql.close());
    return sql;
  }

  async function openStore(url?: string): Promise<{ store: Store; url: string }> {
    const target = url ?? (await pg.cluster.createDatabase());
    const store = await openPostgresStore(target);
    cleanups.push(() => store.close());
    return { store, url: target };
  }

  test("migrate() from five connections at once applies each migration exactly once", async () => {
    const url = await pg.cluster.createDatabase();
    const withExtra = [...MIGRATIONS, "CREATE TABLE extra (id BIGSERIAL PRIMARY KEY);"];
    const versions = await Promise.all(
      Array.from({ length: 5 }, () => migrate(client(url, 1), withExtra)),
    );
    const total = MIGRATIONS.length + 1;
    expect(versions).toEqual(Array.from({ length: 5 }, () => total));
    const sql = client(url);
    const applied = await sql`SELECT version FROM schema_migrations ORDER BY version`;
    expect(applied.map((row: { version: number }) => row.version)).toEqual(
      Array.from({ length: total }, (_, index) => index + 1),
    );
    expect((await sql`SELECT to_regclass('extra') AS t`)[0].t).toBe("extra");
  });

  test("migrate() refuses a database migrated past its last migration, and changes nothing", async () => {
    const url = await pg.cluster.createDatabase();
    const sql = client(url);
    await migrate(sql);
    const older = MIGRATIONS.slice(0, -1);
    const refused = await migrate(sql, older).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SchemaTooNewError);
    expect((refused as Error).message).toBe(
      `its schema is version ${MIGRATIONS.length}, newer than this release knows (${older.length}): run the release that migrated it, or restore the backup taken before the upgrade`,
    );
    const [row] = await sql`SELECT max(version)::int AS version FROM schema_migrations`;
    expect(row.version).toBe(MIGRATIONS.length);
  });

  test("migrate() on an up-to-date database applies only what is new", async () => {
    const url = await pg.cluster.createDatabase();
    const sql = client(url);
    await migrate(sql);
    await sql`INSERT INTO items (sku, name, quantity, updated_at) VALUES ('A', 'a', 1, 'x')`;
    expect(await migrate(sql, [...MIGRATIONS, "ALTER TABLE items ADD COLUMN note TEXT;"])).toBe(
      MIGRATIONS.length + 1,
    );
    const rows = await sql`SELECT sku, note FROM items`;
    expect([...rows]).toEqual([{ sku: "A", note: null }]);
  });

  test("migration 6 on a database with deliveries: objects from the payload or the context, a held claim's generation, a body that is not JSON left alone", async () => {
    const url = await pg.cluster.createDatabase();
    const sql = client(url);
    await migrate(sql, MIGRATIONS.slice(0, 5));
    await sql`INSERT INTO webhooks (name, url, created_at, updated_at)
      VALUES ('a', 'https://e.example/', 0, 0)`;
    const rows: Array<[string, string, string | null, string, number]> = [
      ["item.created", '{"model":"item","data":{"id":7}}', null, "queued", 0],
      // A templated delivery: its payload is the rendered body, the context the change.
      ["item.updated", '{"sku":"A"}', '{"model":"item","data":{"id":7}}', "delivering", 2],
      ["item.deleted", "not JSON {", null, "failed", 1],
      ["item.updated", '{"model":"item","data":{"id":99999999999999999999}}', null, "queued", 0],
      ["ping", '{"model":"item","data":{"id":7}}', null, "successful", 1],
    ];
    for (const [index, [event, payload, context, state, attempts]] of rows.entries()) {
      await sql`INSERT INTO deliveries (webhook_id, message_id, event, payload, context, state,
          attempts, next_attempt_at, lease_expires_at, created_at, updated_at)
        VALUES (1, ${`msg_${index}`}, ${event}, ${payload}, ${context}, ${state}, ${attempts}, 0,
          ${state === "delivering" ? 1 : null}, 0, 0)`;
    }
    const { store } = await openStore(url);
    const item7 = await store.queue.list({ object: { model: "item", id: 7 } });
    expect(item7.map((d) => [d.id, d.objectModel, d.objectId])).toEqual([
      [2, "item", 7],
      [1, "item", 7],
    ]);
    expect((await store.queue.list()).map((d) => d.objectId)).toEqual([null, null, null, 7, 7]);
    const generations = await sql`SELECT id::int, claim_generation FROM deliveries ORDER BY id`;
    expect([...generations]).toEqual([
      { id: 1, claim_generation: 0 },
      { id: 2, claim_generation: 2 },
      { id: 3, claim_generation: 0 },
      { id: 4, claim_generation: 0 },
      { id: 5, claim_generation: 0 },
    ]);
  });

  test("claim() skips a delivery another transaction holds locked instead of waiting for it", async () => {
    const { store, url } = await openStore();
    await store.webhooks.create({ name: "a", url: "https://e.example/1" });
    const ids = [
      ...(await store.queue.enqueue(change())),
      ...(await store.queue.enqueue(change())),
      ...(await store.queue.enqueue(change())),
    ];
    const { unlock, holder } = await holdRowLock(
      client(url),
      (tx) => tx`SELECT id FROM deliveries WHERE id = ${ids[0]} FOR UPDATE`,
    );
    // Were claim() to wait for the lock, it would wait for unlock(), and this test would time out.
    const claims = await store.queue.claim({
      workerId: "w1",
      limit: 10,
      leaseMs: 30_000,
      now: Date.now(),
    });
    expect(claims.map((c) => c.delivery.id)).toEqual(ids.slice(1));
    unlock();
    await holder;
  });

  test("enqueue() NOTIFYs listeners at commit, and never for a rolled-back transaction", async () => {
    const { store, url } = await openStore();
    await store.webhooks.create({ name: "a", url: "https://e.example/1" });
    const heard: string[] = [];
    let onHeard: () => void = () => {};
    const listener = client(url, 1);
    const subscription = await listener.listen(CHANGE_CHANNEL, (payload) => {
      heard.push(payload);
      onHeard();
    });
    cleanups.push(() => subscription.unlisten());
    const next = () =>
      new Promise<void>((resolve) => {
        onHeard = resolve;
      });

    await expect(
      store.transaction(async (tx) => {
        await tx.queue.enqueue(change());
        throw new Error("rolled back");
      }),
    ).rejects.toThrow("rolled back");
    // Notifications arrive in commit order: had the rollback sent one, it would come first.
    const marker = next();
    await client(url)`SELECT pg_notify(${CHANGE_CHANNEL}, 'marker')`;
    await marker;
    expect(heard).toEqual(["marker"]);

    let inside = -1;
    const committed = next();
    await store.transaction(async (tx) => {
      await tx.queue.enqueue(change());
      await client(url)`SELECT 1`; // a round trip during which an early NOTIFY would arrive
      inside = heard.length;
    });
    await committed;
    expect(inside).toBe(1);
    expect(heard).toEqual(["marker", ""]);
    expect((await store.queue.stats()).queued).toBe(1);
  });

  test("re-enabling a webhook wakes waitForChange() in another process, as any write does on SQLite", async () => {
    const { store, url } = await openStore();
    const hook = await store.webhooks.create({ name: "a", url: "https://e.example/1" });
    await store.webhooks.update(hook.id, { enabled: false });
    const { store: other } = await openStore(url);
    await other.queue.claim({ workerId: "w1", limit: 1, leaseMs: 1000, now: Date.now() });
    await other.waitForChange({ timeoutMs: 600_000 }); // starts listening: ends once it listens
    await other.queue.claim({ workerId: "w1", limit: 1, leaseMs: 1000, now: Date.now() });
    const woken = other.waitForChange({ timeoutMs: 600_000 });
    await store.webhooks.update(hook.id, { enabled: true });
    await woken;
  });

  test("the store and its LISTEN connection use the URL's database even when PGDATABASE is set", async () => {
    const url = await pg.cluster.createDatabase();
    const saved = process.env.PGDATABASE;
    process.env.PGDATABASE = "postgres";
    try {
      const { store } = await openStore(url);
      await store.webhooks.create({ name: "a", url: "https://e.example/1" });
      await store.queue.claim({ workerId: "w1", limit: 1, leaseMs: 1000, now: Date.now() });
      await store.waitForChange({ timeoutMs: 600_000 }); // ends once it listens
      // NOTIFY stays within one database: a listener elsewhere would never wake.
      const woken = store.waitForChange({ timeoutMs: 600_000 });
      await store.queue.enqueue(change());
      await woken;
    } finally {
      if (saved === undefined) delete process.env.PGDATABASE;
      else process.env.PGDATABASE = saved;
    }
    const [row] = await client(url)`SELECT count(*)::int AS n FROM deliveries`;
    expect(row.n).toBe(1);
  });

  test("finish() calls made together are written together, each fenced on its own", async () => {
    const { store } = await openStore();
    await store.webhooks.create({ name: "a", url: "https://e.example/1" });
    for (let i = 0; i < 3; i++) await store.queue.enqueue(change());
    const claims = await store.queue.claim({
      workerId: "w1",
      limit: 3,
      leaseMs: 30_000,
      now: Date.now(),
    });
    const [first, stale, third] = claims;
    if (!first || !stale || !third) throw new Error("expected three claims");
    await store.queue.release([stale]);
    const results = await Promise.all([
      store.queue.finish(first, record(), { state: "successful" }),
      store.queue.finish(stale, record(), { state: "successful" }),
      store.queue.finish(third, record({ statusCode: 503 }), {
        state: "queued",
        nextAttemptAt: Date.now() + 60_000,
      }),
      // The same claim twice at once: applied exactly once.
      store.queue.finish(first, record(), { state: "failed" }),
    ]);
    expect(results).toEqual([true, false, true, false]);
    expect(await store.queue.stats()).toEqual({
      queued: 2,
      delivering: 0,
      successful: 1,
      failed: 0,
    });
    expect((await store.queue.get(first.delivery.id))?.attempts).toHaveLength(1);
    expect((await store.queue.get(stale.delivery.id))?.attempts).toEqual([]);
  });

  test("finish() stores a response body holding NUL bytes (as U+FFFD: TEXT cannot hold them)", async () => {
    const { store } = await openStore();
    await store.webhooks.create({ name: "a", url: "https://e.example/1" });
    const { id, claim } = await enqueueAndClaim(store);
    const body = "\u0000\u0001PNG\u0000";
    expect(
      await store.queue.finish(claim, record({ responseBody: body, error: "bad\u0000" }), {
        state: "failed",
      }),
    ).toBe(true);
    const [attempt] = (await store.queue.get(id))?.attempts ?? [];
    expect(attempt?.responseBody).toBe("\uFFFD\u0001PNG\uFFFD");
    expect(attempt?.error).toBe("bad\uFFFD");
  });

  test("createItem()/updateItem() write the item and its deliveries together; a duplicate sku queues nothing", async () => {
    const { store } = await openStore();
    await store.webhooks.create({ name: "all", url: "https://e.example/1" });
    const context = { username: "alice", requestId: "req-1", now: new Date(1_700_000_000_000) };
    const created = await createItem(
      store,
      { sku: "S-1", name: "Bolt", quantity: 2, location: "A1" },
      context,
    );
    expect(created.deliveryIds).toHaveLength(1);
    await expect(
      createItem(store, { sku: "S-1", name: "Other", quantity: 1, location: "" }, context),
    ).rejects.toBeInstanceOf(DuplicateSkuError);
    expect(await store.items.count()).toBe(1);
    expect((await store.queue.stats()).queued).toBe(1);

    const updated = await updateItem(store, created.item.id, { quantity: 5 }, context);
    expect(updated?.changed).toBe(true);
    const [delivery] = await store.queue.list({ limit: 1 });
    expect(delivery?.event).toBe("item.updated");
    expect(JSON.parse(delivery?.payload ?? "{}").snapshots).toMatchObject({
      prechange: { quantity: 2 },
      postchange: { quantity: 5 },
    });
  });

  test("20 identical concurrent updateItem() calls queue exactly one item.updated", async () => {
    const { store } = await openStore();
    await store.webhooks.create({ name: "all", url: "https://e.example/1" });
    const context = { username: "alice", requestId: "req-1", now: new Date(1_700_000_000_000) };
    const { item } = await createItem(
      store,
      { sku: "S-1", name: "Bolt", quantity: 2, location: "A1" },
      context,
    );
    const results = await Promise.all(
      Array.from({ length: 20 }, () => updateItem(store, item.id, { quantity: 9 }, context)),
    );
    expect(results.filter((result) => result?.changed)).toHaveLength(1);
    const updates = (await store.queue.list({})).filter((d) => d.event === "item.updated");
    expect(updates).toHaveLength(1);
    expect(JSON.parse(updates[0]?.payload ?? "{}").snapshots).toMatchObject({
      prechange: { quantity: 2 },
      postchange: { quantity: 9 },
    });
  });

  test("concurrent updateItem() calls chain: each prechange is the previous postchange", async () => {
    const { store } = await openStore();
    await store.webhooks.create({ name: "all", url: "https://e.example/1" });
    const context = { username: "alice", requestId: "req-1", now: new Date(1_700_000_000_000) };
    const { item } = await createItem(
      store,
      { sku: "S-1", name: "Bolt", quantity: 0, location: "A1" },
      context,
    );
    await Promise.all(
      Array.from({ length: 20 }, (_, n) =>
        updateItem(store, item.id, { quantity: n + 1 }, context),
      ),
    );
    // Delivery ids are drawn while the row lock is held, so they follow the order of the writes.
    const snapshots = (await store.queue.list({}))
      .filter((d) => d.event === "item.updated")
      .reverse()
      .map((d) => JSON.parse(d.payload).snapshots as Record<string, { quantity: number }>);
    expect(snapshots).toHaveLength(20);
    let previous = 0;
    for (const { prechange, postchange } of snapshots) {
      expect(prechange?.quantity).toBe(previous);
      previous = postchange?.quantity ?? -1;
    }
    expect((await store.items.get(item.id))?.quantity).toBe(previous);
    expect(new Set(snapshots.map((s) => s.postchange?.quantity)).size).toBe(20);
  });

  test("a duplicate sku inside a transaction leaves the transaction usable, as on SQLite", async () => {
    const { store } = await openStore();
    const now = new Date(1_700_000_000_000);
    await store.transaction(async (tx) => {
      await tx.items.create({ sku: "A", name: "a", quantity: 1, location: "" }, now);
      await expect(
        tx.items.create({ sku: "A", name: "again", quantity: 1, location: "" }, now),
      ).rejects.toBeInstanceOf(DuplicateSkuError);
      await tx.items.create({ sku: "B", name: "b", quantity: 1, location: "" }, now);
    });
    expect((await store.items.list()).map((item) => item.sku)).toEqual(["B", "A"]);
  });

  test("calls through the store inside transaction() join it, and a nested transaction is a savepoint", async () => {
    const { store } = await openStore();
    await store.webhooks.create({ name: "a", url: "https://e.example/1" });
    await expect(
      store.transaction(async () => {
        await store.queue.enqueue(change());
        await expect(
          store.transaction(async () => {
            await store.queue.enqueue(change());
            throw new Error("inner");
          }),
        ).rejects.toThrow("inner");
        expect((await store.queue.stats()).queued).toBe(1);
        throw new Error("outer");
      }),
    ).rejects.toThrow("outer");
    expect((await store.queue.stats()).queued).toBe(0);
  });
});
