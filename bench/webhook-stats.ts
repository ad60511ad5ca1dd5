/**
 * bench:webhooks section `stats`: a webhook's health (GET /api/webhooks/{id}/stats) at
 * 1,000,000 deliveries, each with one attempt in the last week, on SQLite and PostgreSQL. Two
 * shapes: spread over 100 webhooks (10,000 attempts each: one webhook's stats, and the 100 of
 * a webhook list, which reads only the day and the status of each), and all to one webhook (the worst case: its whole week is in its index
 * ranges). Figures are the median of repeated store.queue.attemptTally calls, as the app makes
 * them; the seeding is not timed.
 */
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { openPostgresStore } from "../lib/store/postgres/store.ts";
import { openSqliteStore } from "../lib/store/sqlite/store.ts";
import type { Store } from "../lib/webhooks/ports.ts";
import { startPostgresCluster } from "../tests/fakes/postgres-cluster.ts";

export const STATS_TITLE =
  "A webhook's health (GET /api/webhooks/{id}/stats) at 1,000,000 attempts in the week, SQLite and PostgreSQL";

const COUNT = 1_000_000;
const WEEK = 7 * 86_400_000;
const RUNS = 15;

type Report = (label: string, value: string, note?: string) => void;

/** Outcome of attempt i: 90 % success, then HTTP errors, timeouts and network errors. */
const OUTCOME_SQL = `CASE WHEN (i / 7) % 20 = 0 THEN 'http_error' WHEN (i / 7) % 33 = 0 THEN 'timeout'
  WHEN (i / 7) % 50 = 0 THEN 'network_error' ELSE 'success' END`;

export async function statsSection(options: { report: Report; count?: number }) {
  const count = options.count ?? COUNT;
  const now = Date.now();
  const dir = mkdtempSync(join(tmpdir(), "bench-stats-"));
  const cluster = await startPostgresCluster();
  try {
    for (const webhooks of [100, 1]) {
      const shape = webhooks === 1 ? "all to one webhook" : `over ${webhooks} webhooks`;
      const sqlitePath = join(dir, `stats-${webhooks}.db`);
      seedSqlite(sqlitePath, count, webhooks, now);
      const pgUrl = await cluster.createDatabase();
      await seedPostgres(pgUrl, count, webhooks, now);
      const stores: Array<[string, Store]> = [
        ["SQLite", openSqliteStore(sqlitePath)],
        ["PostgreSQL", await openPostgresStore(pgUrl)],
      ];
      for (const [name, store] of stores) {
        const one = await median(() => store.queue.attemptTally(webhooks === 1 ? 1 : 2, now));
        options.report(
          `${name}, ${shape}: one webhook's stats`,
          ms(one),
          `${count / webhooks} attempts in its week`,
        );
        if (webhooks > 1) {
          const ids = Array.from({ length: webhooks }, (_, i) => i + 1);
          const list = await median(() => store.queue.attemptSummaries(ids, now));
          options.report(`${name}, ${shape}: the list's ${webhooks} summaries`, ms(list));
        }
        await store.close();
      }
    }
  } finally {
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

function seedSqlite(path: string, count: number, webhooks: number, now: number): void {
  openSqliteStore(path).close();
  const db = new Database(path);
  const webhook = db.prepare(
    "INSERT INTO webhooks (id, name, url, created_at, updated_at) VALUES (?1, ?2, 'http://127.0.0.1:9/h', 0, 0)",
  );
  db.transaction(() => {
    for (let id = 1; id <= webhooks; id++) webhook.run(id, `w${id}`);
  })();
  db.run(`WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < ${count})
    INSERT INTO deliveries (id, webhook_id, message_id, event, state, attempts, next_attempt_at,
      created_at, updated_at, completed_at)
    SELECT i, 1 + i % ${webhooks}, 'msg_s' || i, 'item.updated',
      CASE WHEN ${OUTCOME_SQL} = 'success' THEN 'successful' ELSE 'failed' END, 1,
      ${now - WEEK} + i * ${Math.floor(WEEK / count)}, ${now - WEEK} + i * ${Math.floor(WEEK / count)},
      ${now - WEEK} + i * ${Math.floor(WEEK / count)}, ${now - WEEK} + i * ${Math.floor(WEEK / count)}
    FROM g`);
  db.run(`INSERT INTO attempts (delivery_id, attempt, started_at, duration_ms, status_code, outcome,
      webhook_id)
    SELECT id, 1, created_at, 20 + id % 200, NULL, ${OUTCOME_SQL.replaceAll("(i /", "(id /")},
      webhook_id
    FROM deliveries`);
  db.run("ANALYZE");
  db.run("PRAGMA wal_checkpoint(TRUNCATE)");
  db.close();
}

async function seedPostgres(url: string, count: number, webhooks: number, now: number) {
  (await openPostgresStore(url)).close();
  const sql = new SQL(url, { max: 1 });
  try {
    const step = Math.floor(WEEK / count);
    await sql.unsafe(`INSERT INTO webhooks (id, name, url, created_at, updated_at)
      SELECT g, 'w' || g, 'http://127.0.0.1:9/h', 0, 0 FROM generate_series(1, ${webhooks}) g`);
    await sql.unsafe(`INSERT INTO deliveries (id, webhook_id, message_id, event, payload, state,
        attempts, next_attempt_at, created_at, updated_at, completed_at)
      SELECT i, 1 + i % ${webhooks}, 'msg_s' || i, 'item.updated', '{}',
        CASE WHEN ${OUTCOME_SQL} = 'success' THEN 'successful' ELSE 'failed' END, 1,
        ${now - WEEK} + i * ${step}, ${now - WEEK} + i * ${step}, ${now - WEEK} + i * ${step},
        ${now - WEEK} + i * ${step}
      FROM generate_series(1, ${count}) i`);
    await sql.unsafe(`INSERT INTO attempts (delivery_id, attempt, started_at, duration_ms, outcome,
        webhook_id)
      SELECT i, 1, ${now - WEEK} + i * ${step}, 20 + i % 200, ${OUTCOME_SQL}, 1 + i % ${webhooks}
      FROM generate_series(1, ${count}) i`);
    await sql.unsafe("VACUUM ANALYZE attempts");
    await sql.unsafe("VACUUM ANALYZE deliveries");
  } finally {
    await sql.close();
  }
}

async function median(fn: () => Promise<unknown>): Promise<number> {
  await fn();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    await fn();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] ?? 0;
}

function ms(value: number): string {
  return value >= 100 ? `${Math.round(value)} ms` : `${value.toFixed(2)} ms`;
}
