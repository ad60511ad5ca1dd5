/**
 * bench:webhooks section: limits per change, not per template (issue 30). An app process on
 * SQLite and two other clients, one reading (GET /api/items) and one writing (POST /api/items
 * with no costly webhook involved), back to back, while a third client makes the costly thing
 * happen:
 * - ten webhooks whose body template is cheap for the save-time sample but about 60 ms of CPU
 *   for this change's data (the issue measured 1.44 s per POST before the per-change budget);
 * - a Preview flood: five webhooks saved at once through the API, each with 200 header
 *   templates of about 75 ms each (before, one such Preview froze the API for 21 s);
 * - a huge regex set: sixteen regex conditions near the size cap on a 200-character name (the
 *   longest an item's name may be);
 * - saves of constant-folding header templates (`{% set s = "x" * 10000000 %}`, 10 MB built by
 *   the compiler; issue 33 measured 23 s of a frozen API for 300 of them): 300 lines (past the
 *   cap of templated headers) and 20 (at it, compiled and tried in the renderer).
 * Figures: the costly request's time, and the other clients' median, p99 and slowest, beside the
 * same clients with nothing costly going on.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStore } from "../lib/store/sqlite/store.ts";
import type { Store } from "../lib/webhooks/ports.ts";
import { APP_SCRIPT, listening } from "./app-process.ts";

export const CHANGE_LIMITS_TITLE =
  "Limits per change: other clients while costly templates, Previews or regexes run (app process, SQLite)";

const CAP_MS = 60_000;
/** About 60 ms of CPU for quantity 2000, well under 1 ms for the save-time sample's 3. */
const SLOW_FOR_DATA =
  '{% set s = "x" * 100000 %}{% for i in range(data.quantity) %}{% set t = s * 10 %}{% endfor %}ok';
/** About 75 ms of CPU whatever the data. */
const SLOW_HEADER =
  '{% set s = "x" * 100000 %}{% for i in range(2500) %}{% set t = s * 10 %}{% endfor %}x';
const BIG_REGEX = "((a|b){1,30}){1,30}x";
/** Worked out when compiled: 10 MB of constant before any render. */
const FOLDED = '{% set s = "x" * 10000000 %}{{ s | length }}';

type Report = (label: string, value: string, note?: string) => void;

interface Scenario {
  name: string;
  setup(store: Store): Promise<void>;
  /** The costly requests, `round` numbering them apart. */
  costly(base: string, round: number): Promise<unknown>;
}

const SCENARIOS: Scenario[] = [
  {
    name: "nothing costly",
    async setup() {},
    costly: (base, round) => postItem(base, `CALM-${round}`, 1, "Calm"),
  },
  {
    name: "10 templates slow for the data",
    async setup(store) {
      for (let n = 1; n <= 10; n++) {
        await store.webhooks.create({
          name: `slow ${n}`,
          url: `http://127.0.0.1:9/${n}`,
          bodyTemplate: SLOW_FOR_DATA,
        });
      }
    },
    costly: (base, round) => postItem(base, `SLOW-${round}`, 2000, "Slow"),
  },
  {
    name: "a Preview flood: 5 saves of 200 slow headers",
    async setup() {},
    costly: (base, round) =>
      Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          fetch(`${base}/api/webhooks`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({
              name: `flood ${round}-${i}`,
              url: "http://127.0.0.1:9/flood",
              headers: Array.from({ length: 200 }, (_, h) => `X-Slow-${h}: ${SLOW_HEADER}`),
            }),
            signal: AbortSignal.timeout(CAP_MS),
          }).then((response) => response.arrayBuffer()),
        ),
      ),
  },
  {
    name: "16 regex conditions at the size cap",
    async setup(store) {
      const conditions = { or: Array.from({ length: 16 }, () => regexOn("name")) };
      await store.webhooks.create({ name: "regex", url: "http://127.0.0.1:9/r", conditions });
    },
    costly: (base, round) => postItem(base, `RE-${round}`, 1, "ab".repeat(100)),
  },
  foldedSave(300),
  foldedSave(20),
];

/** PATCH /api/webhooks/1 with `lines` header values each folding a 10 MB constant. */
function foldedSave(lines: number): Scenario {
  return {
    name: `a save of ${lines} constant-folding headers`,
    async setup(store) {
      await store.webhooks.create({ name: "target", url: "http://127.0.0.1:9/t" });
    },
    costly: (base) =>
      fetch(`${base}/api/webhooks/1`, {
        method: "PATCH",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          headers: Array.from({ length: lines }, (_, h) => `X-Folded-${h}: ${FOLDED}`),
        }),
        signal: AbortSignal.timeout(CAP_MS),
      }).then((response) => response.arrayBuffer()),
  };
}

function regexOn(attr: string) {
  return { attr, op: "regex" as const, value: BIG_REGEX };
}

export async function changeLimitsSection(options: { report: Report; rounds?: number }) {
  const rounds = options.rounds ?? 10;
  for (const scenario of SCENARIOS) {
    const { costly, reads, writes } = await run(scenario, rounds);
    options.report(
      `${scenario.name}: the costly request, median`,
      ms(median(costly)),
      `slowest ${ms(Math.max(...costly))}, ${costly.length} rounds`,
    );
    options.report(
      `${scenario.name}: other reads, median`,
      ms(median(reads)),
      `p99 ${ms(p99(reads))}, slowest ${ms(Math.max(...reads))}, ${reads.length} GETs`,
    );
    options.report(
      `${scenario.name}: other writes, median`,
      ms(median(writes)),
      `p99 ${ms(p99(writes))}, slowest ${ms(Math.max(...writes))}, ${writes.length} POSTs`,
    );
  }
}

async function run(scenario: Scenario, rounds: number) {
  const dir = mkdtempSync(join(tmpdir(), "bench-limits-"));
  const path = join(dir, "app.db");
  const store = openSqliteStore(path);
  await scenario.setup(store);
  await store.close();
  const app = Bun.spawn(["bun", APP_SCRIPT, "--port", "0"], {
    env: { ...process.env, DATABASE_URL: path },
    stdout: "ignore",
    stderr: "pipe",
  });
  try {
    const base = await listening(app.stderr);
    for (let i = 0; i < 20; i++) await (await fetch(`${base}/api/items`)).arrayBuffer();
    const costly: number[] = [];
    const reads: number[] = [];
    const writes: number[] = [];
    let done = false;
    let written = 0;
    const reader = (async () => {
      while (!done) reads.push(await timed(() => getItems(base)));
    })();
    const writer = (async () => {
      while (!done) writes.push(await timed(() => postItem(base, `W-${written++}`, 1, "Other")));
    })();
    for (let round = 0; round < rounds; round++) {
      costly.push(await timed(() => scenario.costly(base, round)));
    }
    done = true;
    await Promise.all([reader, writer]);
    return { costly, reads, writes };
  } finally {
    app.kill("SIGKILL");
    await app.exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

async function postItem(base: string, sku: string, quantity: number, name: string) {
  const response = await fetch(`${base}/api/items`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ sku, name, quantity, location: "" }),
    signal: AbortSignal.timeout(CAP_MS),
  });
  await response.arrayBuffer();
  if (response.status !== 201) throw new Error(`POST /api/items answered ${response.status}`);
}

async function getItems(base: string) {
  const response = await fetch(`${base}/api/items`, { signal: AbortSignal.timeout(CAP_MS) });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`GET /api/items answered ${response.status}`);
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function p99(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0;
}

function ms(value: number): string {
  return `${value.toFixed(1)} ms`;
}

if (import.meta.main) {
  console.log(CHANGE_LIMITS_TITLE);
  await changeLimitsSection({
    report: (label, value, note) =>
      console.log(`  ${label.padEnd(62)} ${value.padStart(10)}${note ? `   ${note}` : ""}`),
  });
}
