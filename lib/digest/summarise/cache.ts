import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { normaliseModelName } from "./ollama.ts";

/** A digest run as the cache remembers it: when, and the points of each story it showed. */
export interface RunRecord {
  at: number;
  points: ReadonlyMap<number, number>;
}

export interface SummaryCache {
  get(model: string, prompt: string): string | undefined;
  set(model: string, prompt: string, summary: string): void;
  /** The most recent run recorded, or null before the first. */
  lastRun(): RunRecord | null;
  /** Remembers a finished run's stories, so the next run can tell which are new. */
  recordRun(at: number, stories: readonly { id: number; points: number }[]): void;
  close(): void;
}

/** Runs remembered; older ones are forgotten as new ones are recorded. */
export const RUNS_KEPT = 30;

/** The cache key of a prompt: its SHA-256, hex. */
export function promptHash(prompt: string): string {
  return new Bun.CryptoHasher("sha256").update(prompt).digest("hex");
}

/**
 * Opens (creating when missing) the SQLite summary cache at `path` (`:memory:` for tests).
 * Entries are keyed by model and the hash of the exact prompt, so a changed article or
 * discussion, model or budget is a miss and an unchanged story is a hit.
 */
export function openSummaryCache(path: string, options: { now?: () => number } = {}): SummaryCache {
  const now = options.now ?? Date.now;
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path, { create: true, strict: true });
  db.run("PRAGMA journal_mode = WAL");
  db.run("PRAGMA synchronous = NORMAL");
  // Two digests running at once share the file; wait for the other's write instead of failing.
  db.run("PRAGMA busy_timeout = 5000");
  db.run(`CREATE TABLE IF NOT EXISTS summaries (
    model TEXT NOT NULL,
    prompt_sha256 TEXT NOT NULL,
    summary TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (model, prompt_sha256)
  ) WITHOUT ROWID`);
  const getStmt = db.query<{ summary: string }, { model: string; hash: string }>(
    "SELECT summary FROM summaries WHERE model = $model AND prompt_sha256 = $hash",
  );
  const setStmt = db.query<unknown, { model: string; hash: string; summary: string; at: number }>(
    `INSERT INTO summaries (model, prompt_sha256, summary, created_at) VALUES ($model, $hash, $summary, $at)
     ON CONFLICT (model, prompt_sha256) DO UPDATE SET summary = excluded.summary, created_at = excluded.created_at`,
  );
  db.run(`CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    at INTEGER NOT NULL
  )`);
  db.run(`CREATE TABLE IF NOT EXISTS run_stories (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    story_id INTEGER NOT NULL,
    points INTEGER NOT NULL,
    PRIMARY KEY (run_id, story_id)
  ) WITHOUT ROWID`);
  db.run("PRAGMA foreign_keys = ON");
  const lastRunStmt = db.query<{ id: number; at: number }, []>(
    "SELECT id, at FROM runs ORDER BY id DESC LIMIT 1",
  );
  const runStoriesStmt = db.query<{ story_id: number; points: number }, { run: number }>(
    "SELECT story_id, points FROM run_stories WHERE run_id = $run",
  );
  const addRunStmt = db.query<{ id: number }, { at: number }>(
    "INSERT INTO runs (at) VALUES ($at) RETURNING id",
  );
  const addStoryStmt = db.query<unknown, { run: number; story: number; points: number }>(
    "INSERT OR REPLACE INTO run_stories (run_id, story_id, points) VALUES ($run, $story, $points)",
  );
  const forgetStmt = db.query<unknown, { keep: number }>(
    "DELETE FROM runs WHERE id NOT IN (SELECT id FROM runs ORDER BY id DESC LIMIT $keep)",
  );
  const recordRun = db.transaction(
    (at: number, stories: readonly { id: number; points: number }[]) => {
      const run = addRunStmt.get({ at });
      if (!run) return;
      for (const story of stories) {
        addStoryStmt.run({ run: run.id, story: story.id, points: story.points });
      }
      forgetStmt.run({ keep: RUNS_KEPT });
    },
  );
  return {
    lastRun() {
      const run = lastRunStmt.get();
      if (!run) return null;
      const points = new Map<number, number>();
      for (const row of runStoriesStmt.all({ run: run.id })) points.set(row.story_id, row.points);
      return { at: run.at, points };
    },
    recordRun(at, stories) {
      recordRun.immediate(at, stories);
    },
    get(model, prompt) {
      return getStmt.get({ model: normaliseModelName(model), hash: promptHash(prompt) })?.summary;
    },
    set(model, prompt, summary) {
      setStmt.run({
        model: normaliseModelName(model),
        hash: promptHash(prompt),
        summary,
        at: now(),
      });
    },
    close() {
      db.close();
    },
  };
}
