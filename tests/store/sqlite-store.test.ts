import { Database } from "bun:sqlite";
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "../../lib/store/open.ts";
import { openSqlite } from "../../lib/store/sqlite/connection.ts";
import { DUE_SUMMARY_SQLITE } from "../../lib/store/sqlite/queue/due.ts";
import { CLAIM_SQL, LIST_SQL } from "../../lib/store/sqlite/queue/index.ts";
import { MIGRATIONS } from "../../lib/store/sqlite/schema/migrations.ts";
import { createSqliteStore, openSqliteStore } from "../../lib/store/sqlite/store.ts";
import { enqueueAndClaim } from "../fakes/delivery.ts";
import { change, record } from "./contract.ts";

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "sqlite-store-"));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * A queue large enough that the planner's choice matters. Without INDEXED BY, SQLite 3.5x picked
 * `deliveries_state (state=?)` (dropped in migration 3) plus a temp B-tree sort here when no
 * ANALYZE has run (the usual case), which read every queued row on every claim.
 */
function largeQueue(options: { analyze: boolean }): Database {
  const db = openSqlite(":memory:");
  db.run(
    "INSERT INTO webhooks (name, url, created_at, updated_at) VALUES ('a', 'https://e.example/', 0, 0)",
  );
  const insert = db.prepare(
    `INSERT INTO deliveries (webhook_id, message_id, event, state, attempts,
       next_attempt_at, lease_expires_at, created_at, updated_at, completed_at)
     VALUES (1, $m, 'item.created', $state, 1, $next, $lease, 0, 0, $done)`,
  );
  const states = ["successful", "successful", "successful", "failed", "queued", "delivering"];
  db.transaction(() => {
    for (let i = 0; i < 30_000; i++) {
      const state = states[i % states.length] ?? "queued";
      insert.run({
        m: `msg_${i}`,
        state,
        next: 1_000_000 + i,
        lease: state === "delivering" ? 2_000_000 + i : null,
        done: state === "successful" || state === "failed" ? i : null,
      });
    }
  })();
  if (options.analyze) db.run("ANALYZE");
  return db;
}

function plan(db: Database, sql: string): string {
  const named = {
    now: 1_500_000,
    limit: 64,
    lease: 30_000,
    worker: "w",
    expires: 1,
    horizon: 1000,
    before: 20_000,
    webhook: 1,
  };
  const params = sql.includes("?1") ? [1000] : named;
  const rows = db.query(`EXPLAIN QUERY PLAN ${sql}`).all(params as never) as Array<{
    detail: string;
  }>;
  return rows.map((row) => row.detail).join("\n");
}

describe.each([
  ["without statistics", false],
  ["after ANALYZE", true],
])("SQLite queue query plans %s", (_label, analyze) => {
  test("the claim reads due rows webhook by webhook through deliveries_webhook_due, without a sort", () => {
    const db = largeQueue({ analyze });
    for (const sql of [CLAIM_SQL.dueOfWebhook, CLAIM_SQL.sendableDue, CLAIM_SQL.anyDue]) {
      const detail = plan(db, sql);
      expect(detail).toMatch(/USING (COVERING )?INDEX deliveries_webhook_due/);
      expect(detail).not.toContain("TEMP B-TREE");
      // The webhooks table drives: never a walk of the whole due index.
      expect(detail).not.toContain("deliveries_due ");
    }
    const summary = plan(db, DUE_SUMMARY_SQLITE);
    expect(summary).toMatch(/SCAN w\n.*INDEX deliveries_webhook_due/);
  });

  test("lease reclaim and due-time lookups read deliveries_leased and deliveries_webhook_due", () => {
    const db = largeQueue({ analyze });
    const leases = plan(db, CLAIM_SQL.expiredLeases);
    expect(leases).toMatch(/USING (COVERING )?INDEX deliveries_leased/);
    expect(leases).not.toContain("TEMP B-TREE");
    // Only the expired range is read (each row for its owner's heartbeat: the takeover rule).
    const probe = plan(db, CLAIM_SQL.anyExpiredLease);
    expect(probe).toContain("SEARCH d USING INDEX deliveries_leased (lease_expires_at<?)");
    expect(probe).toContain("SEARCH o USING INDEX sqlite_autoindex_workers_1 (id=?)");
    // One probe per webhook into its earliest queued delivery, never a walk of the backlog.
    expect(plan(db, CLAIM_SQL.nextQueued)).toMatch(
      /USING (COVERING )?INDEX deliveries_webhook_due/,
    );
    expect(plan(db, CLAIM_SQL.nextLease)).toMatch(/USING (COVERING )?INDEX deliveries_leased/);
  });

  test("listings by state read the partial index of their state, or the table from `before`", () => {
    const db = largeQueue({ analyze });
    const partial = {
      queued: "deliveries_webhook_due",
      delivering: "deliveries_leased",
      failed: "deliveries_failed",
    } as const;
    for (const [state, index] of Object.entries(partial)) {
      const detail = plan(db, LIST_SQL.byState[state as keyof typeof partial]);
      expect(detail).toContain(`COVERING INDEX ${index}`);
      expect(detail).toContain("SEARCH d USING INTEGER PRIMARY KEY (rowid=?)");
    }
    // Successful rows are most of the table: walked backwards from `before`, stopping at limit.
    expect(plan(db, LIST_SQL.byState.successful)).toContain(
      "SEARCH d USING INTEGER PRIMARY KEY (rowid<?)",
    );
  });

  test("an object's deliveries are one range of deliveries_object, newest first without a sort", () => {
    const db = largeQueue({ analyze });
    const detail = db
      .query(`EXPLAIN QUERY PLAN ${LIST_SQL.byObject}`)
      .all({ model: "item", object: 7, before: 20_000, limit: 25, state: null, webhook: null })
      .map((row) => (row as { detail: string }).detail)
      .join("\n");
    expect(detail).toContain(
      "SEARCH deliveries USING INDEX deliveries_object (object_model=? AND object_id=? AND id<?)",
    );
    expect(detail).not.toContain("TEMP B-TREE");
  });

  test("stats() counts from indexes only, never reading deliveries rows", () => {
    const detail = plan(largeQueue({ analyze }), LIST_SQL.stats);
    const scans = detail.split("\n").filter((line) => /^(SCAN|SEARCH) deliveries/.test(line));
    expect(scans).toHaveLength(4);
    for (const line of scans) expect(line).toContain("COVERING INDEX");
  });
});

describe("openSqlite", () => {
  test("creates the folder and file, in WAL mode, migrated to the latest version", () => {
    const path = join(tempDir(), "nested", "deeper", "app.db");
    const db = openSqlite(path);
    expect(existsSync(path)).toBe(true);
    expect(db.query("PRAGMA journal_mode").get()).toEqual({ journal_mode: "wal" });
    expect(db.query("PRAGMA user_version").get()).toEqual({ user_version: MIGRATIONS.length });
    db.close();
    // Opening again applies nothing twice.
    const again = openSqlite(path);
    expect(again.query("PRAGMA user_version").get()).toEqual({ user_version: MIGRATIONS.length });
    again.close();
  });
});

describe("migration 6: payloads in a table of their own", () => {
  test("a database queued before it keeps every payload, and its deliveries are claimed with them", async () => {
    const path = join(tempDir(), "v5.db");
    const old = new Database(path, { create: true, strict: true });
    for (const migration of MIGRATIONS.slice(0, 5)) old.run(migration);
    old.run("PRAGMA user_version = 5");
    old.run(
      "INSERT INTO webhooks (name, url, created_at, updated_at) VALUES ('a', 'https://e.example/', 0, 0)",
    );
    old.run(
      `INSERT INTO deliveries (webhook_id, message_id, event, payload, state, attempts,
         next_attempt_at, created_at, updated_at)
       VALUES (1, 'msg_old', 'item.updated', '{"old":true}', 'queued', 0, 0, 0, 0)`,
    );
    old.close();

    const store = openSqliteStore(path);
    const [listed] = await store.queue.list();
    expect(listed?.payload).toBe('{"old":true}');
    const claims = await store.queue.claim({ workerId: "w", limit: 5, leaseMs: 60_000, now: 1 });
    expect(claims.map((claim) => claim.delivery.payload)).toEqual(['{"old":true}']);
    await store.close();
    const db = new Database(path);
    const columns = db.query<{ name: string }, []>("PRAGMA table_info(deliveries)").all();
    expect(columns.map((column) => column.name)).not.toContain("payload");
    db.close();
  });

  test("deleting a delivery (retention, a removed webhook) deletes its payload", async () => {
    const path = join(tempDir(), "cascade.db");
    const store = openSqliteStore(path);
    const webhook = await store.webhooks.create({ name: "a", url: "https://e.example/" });
    await store.queue.enqueue(change());
    await store.webhooks.remove(webhook.id);
    await store.close();
    const db = new Database(path);
    expect(db.query("SELECT count(*) AS n FROM delivery_payloads").get()).toEqual({ n: 0 });
    db.close();
  });
});
describe("migration 8: claims and objects on a database with deliveries", () => {
  test("older rows get their object from the payload or the context, a held claim its generation, a body that is not JSON nothing", async () => {
    const path = join(tempDir(), "v7.db");
    const old = new Database(path, { create: true, strict: true });
    for (const migration of MIGRATIONS.slice(0, 7)) old.run(migration);
    old.run("PRAGMA user_version = 7");
    old.run(
      "INSERT INTO webhooks (name, url, created_at, updated_at) VALUES ('a', 'https://e.example/', 0, 0)",
    );
    const rows: Array<[string, string, string | null, string, number]> = [
      ["item.created", '{"model":"item","data":{"id":7}}', null, "queued", 0],
      // A templated delivery: its payload is the rendered body, the context the change.
      ["item.updated", '{"sku":"A"}', '{"model":"item","data":{"id":7}}', "delivering", 2],
      ["item.deleted", "not JSON {", null, "failed", 1],
      ["item.updated", '{"model":"item","data":{"id":"7"}}', null, "queued", 0],
      ["ping", '{"model":"item","data":{"id":7}}', null, "successful", 1],
    ];
    for (const [index, [event, payload, context, state, attempts]] of rows.entries()) {
      old.run(
        `INSERT INTO deliveries (webhook_id, message_id, event, context, state, attempts,
           next_attempt_at, lease_expires_at, created_at, updated_at)
         VALUES (1, ?, ?, ?, ?, ?, 0, ?, 0, 0)`,
        [`msg_${index}`, event, context, state, attempts, state === "delivering" ? 1 : null],
      );
      old.run("INSERT INTO delivery_payloads (delivery_id, payload) VALUES (?, ?)", [
        index + 1,
        payload,
      ]);
    }
    old.close();

    const store = openSqliteStore(path);
    const item7 = await store.queue.list({ object: { model: "item", id: 7 } });
    expect(item7.map((d) => [d.id, d.objectModel, d.objectId])).toEqual([
      [2, "item", 7],
      [1, "item", 7],
    ]);
    expect((await store.queue.list()).map((d) => d.objectId)).toEqual([null, null, null, 7, 7]);
    await store.close();
    const db = new Database(path);
    expect(db.query("SELECT id, claim_generation FROM deliveries ORDER BY id").all()).toEqual([
      { id: 1, claim_generation: 0 },
      { id: 2, claim_generation: 2 },
      { id: 3, claim_generation: 0 },
      { id: 4, claim_generation: 0 },
      { id: 5, claim_generation: 0 },
    ]);
    db.close();
  });
});

describe("migration 15: item and webhook ids never reused", () => {
  test("every row and id is kept, deliveries still cascade with their webhook, and a deleted newest id is not given again", async () => {
    const path = join(tempDir(), "v14.db");
    const old = new Database(path, { create: true, strict: true });
    old.run("PRAGMA foreign_keys = ON");
    for (const migration of MIGRATIONS.slice(0, 14)) old.run(migration);
    old.run("PRAGMA user_version = 14");
    for (const name of ["a", "b", "c"]) {
      old.run(
        "INSERT INTO webhooks (name, url, created_at, updated_at, ordered) VALUES (?, 'https://e.example/', 0, 0, 1)",
        [name],
      );
    }
    for (const sku of ["A", "B"]) {
      old.run(
        "INSERT INTO items (sku, name, quantity, updated_at) VALUES (?, 'x', 1, '2025-01-01T00:00:00.000Z')",
        [sku],
      );
    }
    // Item 3 was created and deleted before the upgrade: only its deliveries remember it.
    for (const [webhook, objectId] of [
      [2, 3],
      [3, 1],
    ]) {
      old.run(
        `INSERT INTO deliveries (webhook_id, message_id, event, state, next_attempt_at, created_at,
           updated_at, object_model, object_id)
         VALUES (?, ?, 'item.deleted', 'failed', 0, 0, 0, 'item', ?)`,
        [webhook ?? 0, `msg_${webhook}`, objectId ?? 0],
      );
      old.run(
        "INSERT INTO delivery_payloads (delivery_id, payload) SELECT max(id), '{}' FROM deliveries",
      );
    }
    old.close();

    const store = openSqliteStore(path);
    expect((await store.webhooks.list()).map((w) => [w.id, w.name, w.ordered])).toEqual([
      [1, "a", true],
      [2, "b", true],
      [3, "c", true],
    ]);
    expect((await store.items.list()).map((item) => [item.id, item.sku])).toEqual([
      [2, "B"],
      [1, "A"],
    ]);
    expect((await store.queue.list()).map((d) => [d.id, d.webhookId])).toEqual([
      [2, 3],
      [1, 2],
    ]);
    await store.webhooks.remove(3);
    expect((await store.queue.list()).map((d) => d.id)).toEqual([1]);
    expect((await store.webhooks.create({ name: "d", url: "https://e.example/" })).id).toBe(4);
    await store.items.remove(2);
    const next = await store.items.create(
      { sku: "C", name: "x", quantity: 1, location: "" },
      new Date(0),
    );
    expect(next.id).toBe(4);
    expect(await store.items.nextId()).toBe(5);
    await store.close();
  });
});

describe("SQLite store transactions", () => {
  test("a store call made inside transaction(fn) joins it instead of waiting for it", async () => {
    const store = createSqliteStore(openSqlite(":memory:"));
    await store.webhooks.create({ name: "a", url: "https://e.example/" });
    await expect(
      store.transaction(async () => {
        // Through `store`, not `tx`: would deadlock if it queued behind the transaction.
        await store.queue.enqueue(change());
        expect((await store.queue.stats()).queued).toBe(1);
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    expect((await store.queue.stats()).queued).toBe(0);
    await store.close();
  });

  test("a nested transaction is a savepoint: its failure can be caught, the outer commits", async () => {
    const store = createSqliteStore(openSqlite(":memory:"));
    await store.webhooks.create({ name: "a", url: "https://e.example/" });
    await store.transaction(async (tx) => {
      await tx.queue.enqueue(change());
      await store
        .transaction(async (inner) => {
          await inner.queue.enqueue(change());
          throw new Error("inner fails");
        })
        .catch(() => {});
    });
    expect((await store.queue.stats()).queued).toBe(1);
    await store.close();
  });

  test("claim() with nothing due answers at once while another process holds the write lock", async () => {
    const path = join(tempDir(), "app.db");
    const store = createSqliteStore(openSqlite(path));
    await store.webhooks.create({ name: "a", url: "https://e.example/" });
    const [first] = await store.queue.enqueue(change());
    await store.queue.claim({ workerId: "w", limit: 1, leaseMs: 60_000, now: Date.now() });
    await store.queue.enqueue(change());
    const other = openSqlite(path);
    other.run("BEGIN IMMEDIATE");
    try {
      // Due later only: an idle worker woken by someone else's commit must not queue up
      // behind (or block) that writer for busy_timeout (5 s) just to find nothing.
      const started = performance.now();
      const early = Date.now() - 60_000;
      expect(
        await store.queue.claim({ workerId: "w", limit: 16, leaseMs: 60_000, now: early }),
      ).toEqual([]);
      expect(performance.now() - started).toBeLessThan(1000);
    } finally {
      other.run("ROLLBACK");
      other.close();
    }
    // Due now: claimed as before.
    const claimed = await store.queue.claim({
      workerId: "w",
      limit: 16,
      leaseMs: 60_000,
      now: Date.now(),
    });
    expect(claimed.map((c) => c.delivery.id)).toEqual([(first ?? 0) + 1]);
    await store.close();
  });

  test("close() wakes a pending waitForChange", async () => {
    const store = createSqliteStore(openSqlite(":memory:"));
    const waiting = store.waitForChange({ timeoutMs: 600_000 });
    await store.close();
    await waiting;
  });
});

describe("openStore", () => {
  test("opens a SQLite store for a sqlite target", async () => {
    const store = await openStore({ kind: "sqlite", path: join(tempDir(), "app.db") });
    expect(store.kind).toBe("sqlite");
    expect(await store.queue.stats()).toEqual({
      queued: 0,
      delivering: 0,
      successful: 0,
      failed: 0,
    });
    await store.close();
  });
});

test("a result recorded right before close() is kept", async () => {
  const path = join(tempDir(), "app.db");
  const store = createSqliteStore(openSqlite(path));
  await store.webhooks.create({ name: "a", url: "https://e.example/" });
  const { id, claim } = await enqueueAndClaim(store, { workerId: "w", leaseMs: 60_000 });
  const finishing = store.queue.finish(claim, record(), { state: "successful" });
  await store.close();
  expect(await finishing).toBe(true);
  const again = createSqliteStore(openSqlite(path));
  expect((await again.queue.get(id ?? 0))?.delivery.state).toBe("successful");
  await again.close();
});

describe("SQLite store that yields when busy (the app)", () => {
  test("a write waiting for another process's lock leaves the thread free, then succeeds", async () => {
    const path = join(tempDir(), "app.db");
    const store = openSqliteStore(path, { yieldWhenBusy: true });
    const holder = openSqlite(path);
    try {
      holder.run("BEGIN IMMEDIATE"); // another process writing
      let settled = false;
      const write = store.webhooks.create({ name: "a", url: "https://e.example/" });
      void write.then(() => {
        settled = true;
      });
      // Timers still run while it waits: the thread is not stuck in SQLite's busy handler.
      for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setTimeout(resolve, 0));
      expect(settled).toBe(false);
      holder.run("COMMIT");
      expect((await write).name).toBe("a");
    } finally {
      holder.close();
      await store.close();
    }
  });
});
