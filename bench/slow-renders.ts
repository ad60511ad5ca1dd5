/**
 * bench:webhooks section: other clients' reads and writes while changes render slow templates.
 * An app process on SQLite with 10 webhooks whose body template is cheap for a small quantity
 * but costs about 60 ms of CPU at quantity 2000 (issue 30); one client PATCHes an item to
 * 2000+ back to back (each change renders up to its 200 ms budget), while another client GETs
 * and PATCHes a different item. Figures: the slow changes' latency, and the other client's
 * reads and writes meanwhile. Everything is on loopback; counts and times are bounded.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStore } from "../lib/store/sqlite/store.ts";
import { APP_SCRIPT, listening } from "./app-process.ts";

export const SLOW_RENDERS_TITLE =
  "Other clients while changes render 10 slow templates (app process, SQLite)";

export const SLOW_TEMPLATE =
  '{% set s = "x" * 100000 %}{% for i in range(data.quantity) %}{% set t = s * 10 %}{% endfor %}ok';
const CAP_MS = 60_000;

export async function slowRendersSection(options: {
  report: (label: string, value: string, note?: string) => void;
  changes?: number;
  webhooks?: number;
}): Promise<void> {
  for (const scoped of [true, false]) {
    const name = scoped ? "others' changes render nothing" : "others' changes render too";
    await oneSetup({ ...options, scoped, name });
  }
}

/**
 * `scoped`: the slow webhooks' conditions match the slow item only (evaluated in the app, no
 * render), so the other client's PATCHes wait for nothing but the database; otherwise each of
 * them also renders the 10 templates (cheap at its quantity) in the same renderer pool.
 */
async function oneSetup(options: {
  report: (label: string, value: string, note?: string) => void;
  changes?: number;
  webhooks?: number;
  scoped: boolean;
  name: string;
}): Promise<void> {
  const changes = options.changes ?? 20;
  const webhooks = options.webhooks ?? 10;
  const dir = mkdtempSync(join(tmpdir(), "bench-slow-renders-"));
  const path = join(dir, "app.db");
  const store = openSqliteStore(path);
  for (let n = 1; n <= webhooks; n++) {
    await store.webhooks.create({
      name: `slow ${n}`,
      url: `http://127.0.0.1:9/${n}`,
      bodyTemplate: SLOW_TEMPLATE,
      conditions: options.scoped ? { and: [{ attr: "sku", value: "SLOW-1" }] } : null,
    });
  }
  const item = (sku: string) =>
    store.items.create({ sku, name: "Bench item", quantity: 0, location: "" }, new Date());
  const slow = await item("SLOW-1");
  const other = await item("OTHER-1");
  await store.close();
  const app = Bun.spawn(["bun", APP_SCRIPT, "--port", "0"], {
    env: { ...process.env, DATABASE_URL: path },
    stdout: "ignore",
    stderr: "pipe",
  });
  try {
    const base = await listening(app.stderr);
    // Warm: the first requests compile routes; the renderer processes start meanwhile.
    for (let i = 0; i < 20; i++) await request(`${base}/api/items/${other.id}`);
    await Bun.sleep(1000);
    const changeMs: number[] = [];
    const readMs: number[] = [];
    const writeMs: number[] = [];
    let done = false;
    const slowClient = (async () => {
      for (let i = 0; i < changes; i++) {
        changeMs.push(await request(`${base}/api/items/${slow.id}`, { quantity: 2000 + i }));
      }
      done = true;
    })();
    const otherClient = (async () => {
      for (let i = 1; !done; i++) {
        readMs.push(await request(`${base}/api/items/${other.id}`));
        writeMs.push(await request(`${base}/api/items/${other.id}`, { quantity: i }));
      }
    })();
    await Promise.all([slowClient, otherClient]);
    const report = (label: string, value: number, note?: string) =>
      options.report(`${label}`, ms(value), note);
    console.log(`  ${options.name}:`);
    report("slow change (PATCH), p50", at(changeMs, 0.5), `${changes} × ${webhooks} webhooks`);
    report("slow change (PATCH), slowest", at(changeMs, 1));
    report("other client's GET, p50", at(readMs, 0.5), `${readMs.length} GETs`);
    report("other client's GET, p99", at(readMs, 0.99));
    report("other client's PATCH, p50", at(writeMs, 0.5), `${writeMs.length} PATCHes`);
    report("other client's PATCH, p99", at(writeMs, 0.99));
  } finally {
    app.kill("SIGKILL");
    await app.exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

/** GET `url`, or PATCH it with `patch`; how long it took, in ms. */
async function request(url: string, patch?: object): Promise<number> {
  const started = performance.now();
  const response = await fetch(url, {
    method: patch ? "PATCH" : "GET",
    headers: patch ? { "content-type": "application/json" } : {},
    body: patch ? JSON.stringify(patch) : undefined,
    signal: AbortSignal.timeout(CAP_MS),
  });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}`);
  return performance.now() - started;
}

function at(samples: number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

function ms(value: number): string {
  return `${value.toFixed(2)} ms`;
}

if (import.meta.main) {
  console.log(SLOW_RENDERS_TITLE);
  await slowRendersSection({
    report: (label, value, note) =>
      console.log(`  ${label.padEnd(44)} ${value.padStart(14)}${note ? `   ${note}` : ""}`),
  });
}
