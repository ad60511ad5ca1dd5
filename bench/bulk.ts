/**
 * bench:webhooks section `bulk`: retry and replay of 100,000 deliveries while another client
 * reads (issue 33). An app process on SQLite with BULK_COUNT failed deliveries; one client makes
 * the bulk request (the API's retry and replay by filter, the admin's "Retry all failed") while
 * another sends GET /api/deliveries/1 back to back. Figures: the bulk request's time, the other
 * client's GETs (median, p99, slowest) meanwhile, and beside them the same GETs with nothing
 * going on. Then, in this process, the same retry with each chunk's write timed: how long one
 * transaction holds the write lock.
 */
import { Database } from "bun:sqlite";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStore } from "../lib/store/sqlite/store.ts";
import { DEFAULT_PACE, retryMatching } from "../lib/webhooks/delivery/replay.ts";
import type { DeliveryQueue } from "../lib/webhooks/ports.ts";
import { APP_SCRIPT, listening } from "./app-process.ts";

export const BULK_TITLE =
  "Bulk retry and replay of 100,000 deliveries: another client's GETs meanwhile (app process, SQLite)";

const BULK_COUNT = 100_000;
const CAP_MS = 120_000;

type Report = (label: string, value: string, note?: string) => void;

interface Scenario {
  name: string;
  /** The bulk request; null: none (the other client alone, for comparison). */
  bulk: ((base: string) => Promise<unknown>) | null;
}

const SCENARIOS: Scenario[] = [
  { name: "nothing else", bulk: null },
  {
    name: "API retry by filter",
    bulk: (base) => postJson(base, "/api/deliveries/retry", { webhook: 1 }),
  },
  {
    name: "API replay by filter",
    bulk: (base) => postJson(base, "/api/deliveries/replay", { webhook: 1 }),
  },
  { name: 'admin "Retry all failed"', bulk: retryAllButton },
];

export async function bulkSection(options: { report: Report; count?: number }) {
  const count = options.count ?? BULK_COUNT;
  const dir = mkdtempSync(join(tmpdir(), "bench-bulk-"));
  try {
    const seed = join(dir, "seed.db");
    seedFailed(seed, count);
    for (const [i, scenario] of SCENARIOS.entries()) {
      const path = join(dir, `app-${i}.db`);
      copyFileSync(seed, path);
      const { bulkMs, gets } = await run(path, scenario);
      if (bulkMs !== null) {
        options.report(`${scenario.name}: the bulk request`, ms(bulkMs), `${count} deliveries`);
      }
      options.report(
        `${scenario.name}: other client's GET, median`,
        ms(percentile(gets, 0.5)),
        `p99 ${ms(percentile(gets, 0.99))}, slowest ${ms(Math.max(...gets))}, ${gets.length} GETs`,
      );
    }
    const path = join(dir, "chunks.db");
    copyFileSync(seed, path);
    const chunks = await chunkTimes(path);
    options.report(
      "in process: one chunk's write transaction, median",
      ms(percentile(chunks, 0.5)),
      `p99 ${ms(percentile(chunks, 0.99))}, longest ${ms(Math.max(...chunks))}, ${chunks.length} chunks of up to ${DEFAULT_PACE.chunkSize}`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `count` failed deliveries of webhook 1, written by hand in one transaction. */
function seedFailed(path: string, count: number): void {
  openSqliteStore(path).close();
  const db = new Database(path);
  db.run(
    "INSERT INTO webhooks (id, name, url, created_at, updated_at) VALUES (1, 'erp', 'http://127.0.0.1:9/h', 0, 0)",
  );
  const insert = db.prepare(
    `INSERT INTO deliveries (webhook_id, message_id, event, state, attempts, next_attempt_at,
       created_at, updated_at, completed_at, last_error)
     VALUES (1, ?1, 'item.updated', 'failed', 8, ?2, ?2, ?2, ?2, 'Connection refused')`,
  );
  const t0 = Date.now() - 86_400_000;
  db.transaction(() => {
    for (let i = 0; i < count; i++) insert.run(`msg_bulk${i}`, t0 + i);
  })();
  db.run("PRAGMA wal_checkpoint(TRUNCATE)");
  db.close();
}

async function run(path: string, scenario: Scenario) {
  const app = Bun.spawn(["bun", APP_SCRIPT, "--port", "0"], {
    env: { ...process.env, DATABASE_URL: path },
    stdout: "ignore",
    stderr: "pipe",
  });
  try {
    const base = await listening(app.stderr);
    for (let i = 0; i < 20; i++) await getOne(base);
    const gets: number[] = [];
    let done = false;
    const other = (async () => {
      while (!done) gets.push(await timed(() => getOne(base)));
    })();
    let bulkMs: number | null = null;
    if (scenario.bulk) {
      const bulk = scenario.bulk;
      bulkMs = await timed(() => bulk(base));
    } else {
      // Nothing else: the other client alone for about as long as a bulk request takes.
      const started = performance.now();
      while (performance.now() - started < 1000) await Bun.sleep(50);
    }
    done = true;
    await other;
    return { bulkMs, gets };
  } finally {
    app.kill("SIGKILL");
    await app.exited;
  }
}

/** The same retry in this process, each chunk's write (one transaction) timed. */
async function chunkTimes(path: string): Promise<number[]> {
  const store = openSqliteStore(path);
  const times: number[] = [];
  const queue: DeliveryQueue = {
    ...store.queue,
    retry: async (ids, now) => {
      const started = performance.now();
      const changed = await store.queue.retry(ids, now);
      times.push(performance.now() - started);
      return changed;
    },
  };
  await retryMatching(queue, { webhookId: 1 }, Date.now());
  await store.close();
  return times;
}

async function postJson(base: string, path: string, body: unknown) {
  const response = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(CAP_MS),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`POST ${path} answered ${response.status}: ${text}`);
}

/** The admin's button: its page read for the CSRF cookie and field, then the form posted. */
async function retryAllButton(base: string) {
  const page = await fetch(`${base}/admin/background-tasks`);
  const cookie = (page.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  const token = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1] ?? "";
  const response = await fetch(`${base}/admin/background-tasks/retry-failed`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie, origin: base },
    body: new URLSearchParams({ _csrf: token }),
    redirect: "manual",
    signal: AbortSignal.timeout(CAP_MS),
  });
  await response.arrayBuffer();
  if (response.status !== 303) throw new Error(`Retry all failed answered ${response.status}`);
}

async function getOne(base: string) {
  const response = await fetch(`${base}/api/deliveries/1`, { signal: AbortSignal.timeout(CAP_MS) });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`GET /api/deliveries/1 answered ${response.status}`);
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
}

function ms(value: number): string {
  return `${value.toFixed(1)} ms`;
}

if (import.meta.main) {
  console.log(BULK_TITLE);
  await bulkSection({
    report: (label, value, note) =>
      console.log(`  ${label.padEnd(56)} ${value.padStart(10)}${note ? `   ${note}` : ""}`),
  });
}
