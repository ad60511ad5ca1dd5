import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { SQL } from "bun";
import {
  migrate as migratePostgres,
  MIGRATIONS as PG_MIGRATIONS,
} from "../../lib/store/postgres/migrations.ts";
import { openPostgresStore } from "../../lib/store/postgres/store.ts";
import { MIGRATIONS } from "../../lib/store/sqlite/schema/migrations.ts";
import { openSqliteStore } from "../../lib/store/sqlite/store.ts";
import type { Store } from "../../lib/webhooks/ports.ts";
import { describePostgres, usePostgresCluster } from "../fakes/postgres-cluster.ts";
import { tempDirs } from "../fakes/temp-dirs.ts";

const tempDir = tempDirs("attempts-webhook-");
const NOW = 1_700_000_000_000;

/** The migration that gives attempts their webhook: those before it make an older database. */
function before(migrations: readonly string[]): readonly string[] {
  const at = migrations.findIndex((m) => m.includes("attempts_webhook_outcome"));
  expect(at).toBeGreaterThan(0);
  return migrations.slice(0, at);
}

/** Two webhooks; webhook 1's deliveries 1 and 2, webhook 2's 3; an attempt each, 3 on 2. */
const ATTEMPTS: Array<[delivery: number, attempt: number, outcome: string]> = [
  [1, 1, "success"],
  [2, 1, "http_error"],
  [3, 1, "timeout"],
  [3, 2, "success"],
];

async function expectFilled(store: Store) {
  const one = await store.queue.attemptTally(1, NOW);
  const two = await store.queue.attemptTally(2, NOW);
  expect(one.counts).toEqual({
    success: { hour: 1, day: 1, week: 1 },
    http_error: { hour: 1, day: 1, week: 1 },
  });
  expect(two.counts).toEqual({
    timeout: { hour: 1, day: 1, week: 1 },
    success: { hour: 1, day: 1, week: 1 },
  });
}

describe("migration: attempts name their webhook (the health index)", () => {
  test("SQLite: the attempts kept are given their delivery's webhook", async () => {
    const path = join(tempDir(), "older.db");
    const old = new Database(path, { create: true, strict: true });
    old.run("PRAGMA foreign_keys = ON");
    const older = before(MIGRATIONS);
    for (const migration of older) old.run(migration);
    old.run(`PRAGMA user_version = ${older.length}`);
    for (const name of ["a", "b"]) {
      old.run(
        "INSERT INTO webhooks (name, url, created_at, updated_at) VALUES (?, 'https://e.example/', 0, 0)",
        [name],
      );
    }
    for (const [id, webhook] of [
      [1, 1],
      [2, 1],
      [3, 2],
    ]) {
      old.run(
        `INSERT INTO deliveries (id, webhook_id, message_id, event, state, next_attempt_at,
           created_at, updated_at) VALUES (?, ?, ?, 'item.updated', 'failed', 0, 0, 0)`,
        [id ?? 0, webhook ?? 0, `msg_${id}`],
      );
    }
    for (const [delivery, attempt, outcome] of ATTEMPTS) {
      old.run(
        `INSERT INTO attempts (delivery_id, attempt, started_at, duration_ms, outcome)
         VALUES (?, ?, ?, 5, ?)`,
        [delivery, attempt, NOW - 60_000, outcome],
      );
    }
    old.close();
    const store = openSqliteStore(path);
    try {
      await expectFilled(store);
    } finally {
      await store.close();
    }
  });
});

describePostgres("migration on PostgreSQL: attempts name their webhook", () => {
  const pg = usePostgresCluster();

  test("PostgreSQL: the attempts kept are given their delivery's webhook", async () => {
    const url = await pg.cluster.createDatabase();
    const sql = new SQL(url, { max: 1 });
    try {
      await migratePostgres(sql, before(PG_MIGRATIONS));
      await sql`INSERT INTO webhooks (name, url, created_at, updated_at)
        VALUES ('a', 'https://e.example/', 0, 0), ('b', 'https://e.example/', 0, 0)`;
      await sql`INSERT INTO deliveries (id, webhook_id, message_id, event, payload, state,
          next_attempt_at, created_at, updated_at)
        VALUES (1, 1, 'msg_1', 'item.updated', '{}', 'failed', 0, 0, 0),
          (2, 1, 'msg_2', 'item.updated', '{}', 'failed', 0, 0, 0),
          (3, 2, 'msg_3', 'item.updated', '{}', 'failed', 0, 0, 0)`;
      for (const [delivery, attempt, outcome] of ATTEMPTS) {
        await sql`INSERT INTO attempts (delivery_id, attempt, started_at, duration_ms, outcome)
          VALUES (${delivery}, ${attempt}, ${NOW - 60_000}, 5, ${outcome})`;
      }
    } finally {
      await sql.close();
    }
    const store = await openPostgresStore(url);
    pg.cleanups.push(() => store.close());
    await expectFilled(store);
  });
});
