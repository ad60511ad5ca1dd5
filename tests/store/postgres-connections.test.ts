import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { SQL } from "bun";
import type { Logger } from "../../lib/log.ts";
import { createMemoryLogger } from "../../lib/log.ts";
import { openStore } from "../../lib/store/open.ts";
import { createItem, updateItem } from "../../lib/webhooks/events/item-changes.ts";
import type { Store } from "../../lib/webhooks/ports.ts";
import { pollUntil } from "../fakes/poll.ts";
import {
  describePostgres,
  type PostgresCluster,
  startPostgresCluster,
} from "../fakes/postgres-cluster.ts";
import { holdRowLock } from "../fakes/row-lock.ts";
import { gate } from "../fakes/webhook-endpoint.ts";

/** The connection budget: what a process opens, as the server counts it. */
describePostgres("PostgreSQL connection budget", () => {
  let cluster: PostgresCluster;
  let admin: SQL;
  const cleanups: Array<() => Promise<unknown>> = [];

  beforeAll(async () => {
    cluster = await startPostgresCluster();
    admin = new SQL(cluster.url(), { max: 1 });
  });
  afterAll(async () => {
    await admin?.close();
    await cluster?.stop();
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  function track<T extends { close(): Promise<unknown> }>(thing: T): T {
    cleanups.push(() => thing.close());
    return thing;
  }

  function databaseOf(url: string): string {
    return new URL(url).pathname.slice(1);
  }

  /** Backends connected to `database`, as pg_stat_activity shows them. */
  async function backends(
    database: string,
    except = 0,
  ): Promise<Array<{ query: string; waiting: boolean }>> {
    return admin<Array<{ query: string; waiting: boolean }>>`
      SELECT query, wait_event_type = 'Lock' AS waiting FROM pg_stat_activity
      WHERE datname = ${database} AND pid <> ${except}`;
  }

  test("a worker with DATABASE_URL max=3 opens 3 connections: 2 pooled and LISTEN", async () => {
    const url = await cluster.createDatabase();
    const database = databaseOf(url);
    const store: Store = track(
      await openStore({ kind: "postgres", url: `${url}?max=3`, poolMax: 3 }, { role: "worker" }),
    );
    await store.webhooks.create({ name: "all", url: "https://e.example/1" });
    const context = { username: "a", requestId: "r", now: new Date(1_700_000_000_000) };
    const { item } = await createItem(
      store,
      { sku: "S", name: "n", quantity: 0, location: "" },
      context,
    );
    // Opens the LISTEN connection.
    void store.waitForChange({ timeoutMs: 0 });

    // Someone else holds the item's row lock: every update waits on the server, holding its
    // connection, so a pool that ignored its limit would open one connection per update.
    const other = track(new SQL(url, { max: 1 }));
    let otherPid = 0;
    const { unlock, holder } = await holdRowLock(other, async (tx) => {
      const [row] = await tx.unsafe(
        `SELECT pg_backend_pid() AS pid FROM items WHERE id = ${item.id} FOR UPDATE`,
      );
      otherPid = row.pid;
    });
    const updates = Array.from({ length: 10 }, (_, n) =>
      updateItem(store, item.id, { quantity: n + 1 }, context),
    );
    // Polled: the server's view of its backends is what shows the pool's limit.
    const during = await pollUntil(
      () => backends(database, otherPid),
      (rows) => rows.filter((row) => row.waiting).length >= 2,
      10_000,
    );
    unlock();
    await holder;
    await Promise.all(updates);

    expect(during.filter((row) => row.waiting)).toHaveLength(2);
    const after = await backends(database, otherPid);
    expect(after).toHaveLength(3);
    expect(after.filter((row) => /^LISTEN/i.test(row.query))).toHaveLength(1);
  });

  test("a one-shot command opens one connection by default", async () => {
    const url = await cluster.createDatabase();
    const store = track(await openStore({ kind: "postgres", url }, { role: "command" }));
    await Promise.all(Array.from({ length: 8 }, () => store.queue.stats()));
    expect(await backends(databaseOf(url))).toHaveLength(1);
  });

  test("at the server's limit a worker waits with one clear line, then starts", async () => {
    // A role's connection limit answers exactly as a full server does (SQLSTATE 53300).
    const url = await cluster.createDatabase();
    const database = databaseOf(url);
    await admin.unsafe("DROP ROLE IF EXISTS budget_user");
    await admin.unsafe("CREATE ROLE budget_user LOGIN CONNECTION LIMIT 1");
    await admin.unsafe(`ALTER DATABASE ${database} OWNER TO budget_user`);
    cleanups.push(() => admin.unsafe(`ALTER DATABASE ${database} OWNER TO postgres`));
    const limited = url.replace("postgres@", "budget_user@");
    const occupant = new SQL(limited, { max: 1 });
    await occupant`SELECT 1`;

    const lines = createMemoryLogger();
    const { open: waiting, promise: warned } = gate();
    const logger = {
      info: lines.info,
      warn: (message: string) => {
        lines.warn(message);
        waiting();
      },
    } as Pick<Logger, "warn" | "info">;
    const opening = openStore({ kind: "postgres", url: limited }, { role: "worker", logger });
    await warned;
    await occupant.close();
    const store = track(await opening);
    expect((await store.queue.stats()).queued).toBe(0);
    expect(lines.lines).toHaveLength(2);
    expect(lines.lines[0]).toContain("warn PostgreSQL at 127.0.0.1:");
    expect(lines.lines[0]).toContain("has no free connection");
    expect(lines.lines[0]).toContain("too many connections");
    expect(lines.lines[0]).toContain("DATABASE_POOL_MAX");
    expect(lines.lines[1]).toMatch(/^info PostgreSQL connected after \d+\.\d s$/);
  });

  test("start-up fails at once when waiting cannot help (the database refuses all connections)", async () => {
    const url = await cluster.createDatabase();
    await admin.unsafe(`ALTER DATABASE ${databaseOf(url)} ALLOW_CONNECTIONS false`);
    cleanups.push(() => admin.unsafe(`ALTER DATABASE ${databaseOf(url)} ALLOW_CONNECTIONS true`));
    // Not a budget problem (SQLSTATE 55000): no retry at all.
    const error = await openStore({ kind: "postgres", url }, { role: "command" }).catch((e) => e);
    expect(String(error?.message)).toContain("is not currently accepting connections");
  });
});
