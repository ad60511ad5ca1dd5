import { expect, test } from "bun:test";
import { SQL } from "bun";
import { createMemoryLogger } from "../../lib/log.ts";
import {
  CHANGE_CHANNEL,
  type ChangeListener,
  createChangeListener,
} from "../../lib/store/postgres/changes.ts";
import { openPostgresStore } from "../../lib/store/postgres/store.ts";
import { enqueueAndClaim } from "../fakes/delivery.ts";
import { describePostgres, usePostgresCluster } from "../fakes/postgres-cluster.ts";
import { change, record } from "./contract.ts";

/** The database going away under a running store. A cluster of its own: these tests stop it. */
describePostgres("PostgreSQL store through a database outage", () => {
  const pg = usePostgresCluster();
  const { cleanups } = pg;

  function listener(url: string, options: Parameters<typeof createChangeListener>[1]) {
    const changes = createChangeListener(url, options);
    cleanups.push(() => changes.close());
    return changes;
  }

  /** Waits until the listener reports `listening`; each wait ends at a (re)connect or drop. */
  async function untilListening(changes: ChangeListener, expected = true): Promise<void> {
    for (let i = 0; i < 50 && changes.listening !== expected; i++) {
      await changes.wait({ timeoutMs: 600_000 });
    }
    expect(changes.listening).toBe(expected);
  }

  async function notify(url: string): Promise<void> {
    const sql = new SQL(url, { max: 1 });
    await sql`SELECT pg_notify(${CHANGE_CHANNEL}, '')`;
    await sql.close();
  }

  test("waitForChange() polls while the database is down instead of waiting out its timeout", async () => {
    const url = await pg.cluster.createDatabase();
    const changes = listener(url, { pollIntervalMs: 20, reconnect: { minMs: 10, maxMs: 50 } });
    await untilListening(changes);
    await pg.cluster.stopServer();
    try {
      await untilListening(changes, false);
      // Each of these would take ten minutes were the wait not cut to the polling interval.
      for (let i = 0; i < 3; i++) {
        changes.markSeen();
        await changes.wait({ timeoutMs: 600_000 });
      }
      expect(changes.listening).toBe(false);
    } finally {
      await pg.cluster.startServer();
    }
  });

  test("the LISTEN connection reconnects after a restart and hears NOTIFY again", async () => {
    const url = await pg.cluster.createDatabase();
    const logger = createMemoryLogger();
    // No polling: only a notification or a (re)connection can end these waits.
    const changes = listener(url, {
      pollIntervalMs: 600_000,
      reconnect: { minMs: 10, maxMs: 100 },
      logger,
    });
    await untilListening(changes);
    await pg.cluster.restart();
    // It may be listening again before pg_ctl returns: follow the log, not the flag alone.
    const reconnected = () => logger.lines.some((line) => line.includes("connection established"));
    for (let i = 0; i < 50 && !reconnected(); i++) await changes.wait({ timeoutMs: 600_000 });
    expect(logger.lines.filter((line) => !line.includes("LISTEN failed"))).toEqual([
      "warn PostgreSQL LISTEN connection lost: polling until it is back",
      "info PostgreSQL LISTEN connection established",
    ]);
    expect(changes.listening).toBe(true);

    changes.markSeen();
    const woken = changes.wait({ timeoutMs: 600_000 });
    await notify(url);
    await woken;
  });

  test("finish() made while the database is down fails as an outage; tried again once it is back, it is recorded once", async () => {
    const url = await pg.cluster.createDatabase();
    const store = await openPostgresStore(url);
    cleanups.push(() => store.close());
    await store.webhooks.create({ name: "a", url: "https://e.example/1" });
    const { id, claim } = await enqueueAndClaim(store);

    // The store does not retry a result itself: the worker's loop is the one layer that does
    // (abortable, resumed when the database answers).
    await pg.cluster.stopServer();
    let failure: unknown = null;
    try {
      await store.queue.finish(claim, record(), { state: "successful" });
    } catch (error) {
      failure = error;
    } finally {
      await pg.cluster.startServer();
    }
    expect(store.isUnreachable(failure)).toBe(true);
    expect(await store.queue.finish(claim, record(), { state: "successful" })).toBe(true);
    const shown = await store.queue.get(id);
    expect(shown?.delivery.state).toBe("successful");
    expect(shown?.attempts.map((a) => [a.attempt, a.outcome])).toEqual([[1, "success"]]);
  });

  test("the store's pool serves queries again after a restart", async () => {
    const url = await pg.cluster.createDatabase();
    const store = await openPostgresStore(url);
    cleanups.push(() => store.close());
    await store.webhooks.create({ name: "a", url: "https://e.example/1" });
    await pg.cluster.restart();
    expect(await store.queue.enqueue(change())).toHaveLength(1);
    expect((await store.queue.stats()).queued).toBe(1);
  });
});
