import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { itemId } from "../fetch/exact-ids.ts";
import type { ItemId } from "../types.ts";
import type { TokenSample } from "./calibration.ts";
import { normaliseModelName, type Placement } from "./models/model-client.ts";

/** A digest run as the cache remembers it: when, and the points of each story it showed. */
export interface RunRecord {
  at: number;
  points: ReadonlyMap<ItemId, number>;
}

/** What the last check of a model found: enough to start a re-run without asking the server. */
export interface CheckedModel {
  /** The model's own context length, or the server's; null when not reported. */
  contextLength: number | null;
  /** Where it ran; null when the server could not tell. */
  placement: Placement | null;
}

/** Which half of a story a summary is of. */
export type SummaryKind = "article" | "discussion";

/** A summary as the cache keeps it: the latest one per model, story and kind. */
export interface StoredSummary {
  summary: string;
  /** SHA-256 of what it was made from (see sourceHash): the article, or the thread's comments. */
  sourceHash: string;
  /** Comments in the discussion when it was written (0 for an article). */
  comments: number;
  /** Comments (or, for an article, per mille of the text) the model saw. */
  shown: number;
  /** When the newest comment it was made from was posted (unix s; 0 when unknown). */
  latestCommentAt: number;
  /** Times it was updated from an earlier summary plus new comments, since written whole. */
  updates: number;
  /** When it was written (ms). */
  createdAt: number;
}

export interface SummaryCache {
  lookup(model: string, storyId: ItemId, kind: SummaryKind): StoredSummary | undefined;
  store(
    model: string,
    key: { storyId: ItemId; kind: SummaryKind },
    entry: Omit<StoredSummary, "createdAt">,
  ): void;
  /** What the model counted for its recent prompts, newest first (see calibration.ts). */
  tokenSamples(model: string): TokenSample[];
  /** Remembers what the model counted for a prompt estimated at `estimated` tokens. */
  recordTokens(model: string, sample: TokenSample): void;
  /** What the last check of the model at the server's URL found; undefined when never checked. */
  checkedModel(server: string, model: string): CheckedModel | undefined;
  /** Remembers what a check of the model at the server's URL found, for the next run's start. */
  rememberModel(server: string, model: string, checked: CheckedModel): void;
  /** The most recent run recorded, or null before the first. */
  lastRun(): RunRecord | null;
  /** Remembers a finished run's stories, so the next run can tell which are new. */
  recordRun(at: number, stories: readonly { id: ItemId; points: number }[]): void;
  close(): void;
}

const PLACEMENTS: readonly Placement[] = ["gpu", "partial", "cpu"];

/** Runs remembered; older ones are forgotten as new ones are recorded. */
export const RUNS_KEPT = 30;

/** Token samples kept per model; older ones are forgotten as new ones come in. */
export const TOKEN_SAMPLES_KEPT = 40;

/** What a summary was made from, as a key: SHA-256, hex, of the parts, each length-prefixed. */
export function sourceHash(parts: readonly string[]): string {
  const hasher = new Bun.CryptoHasher("sha256");
  for (const part of parts) hasher.update(`${part.length}:${part}`);
  return hasher.digest("hex");
}

/** The cache's database: its folder made, WAL, a wait for another digest's write, its tables. */
function openCacheDatabase(path: string): Database {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path, { create: true, strict: true });
  db.run("PRAGMA journal_mode = WAL");
  db.run("PRAGMA synchronous = NORMAL");
  // Two digests running at once share the file; wait for the other's write instead of failing.
  db.run("PRAGMA busy_timeout = 5000");
  // Summaries keyed by the exact prompt (before re-runs could reuse them) are of no more use.
  db.run("DROP TABLE IF EXISTS summaries");
  db.run(`CREATE TABLE IF NOT EXISTS story_summaries (
    model TEXT NOT NULL,
    story_id INTEGER NOT NULL,
    kind TEXT NOT NULL,
    source_sha256 TEXT NOT NULL,
    comments INTEGER NOT NULL,
    shown REAL NOT NULL,
    latest_comment_at INTEGER NOT NULL,
    updates INTEGER NOT NULL,
    summary TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (model, story_id, kind)
  ) WITHOUT ROWID`);
  db.run(`CREATE TABLE IF NOT EXISTS token_samples (
    id INTEGER PRIMARY KEY,
    model TEXT NOT NULL,
    kind TEXT NOT NULL,
    estimated INTEGER NOT NULL,
    counted INTEGER NOT NULL
  )`);
  db.run("CREATE INDEX IF NOT EXISTS token_samples_model ON token_samples (model, id)");
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
  db.run(`CREATE TABLE IF NOT EXISTS checked_models (
    server TEXT NOT NULL,
    model TEXT NOT NULL,
    context_length INTEGER,
    placement TEXT,
    checked_at INTEGER NOT NULL,
    PRIMARY KEY (server, model)
  ) WITHOUT ROWID`);
  db.run("PRAGMA foreign_keys = ON");
  return db;
}

/**
 * Opens (creating when missing) the SQLite summary cache at `path` (`:memory:` for tests).
 * It keeps the latest summary of each story's article and discussion per model, with what it
 * was made from, so a re-run can reuse or update it (see reuse.ts) whatever budget the prompt
 * had; the token counts models reported, for calibration; and the runs' stories.
 */
export function openSummaryCache(path: string, options: { now?: () => number } = {}): SummaryCache {
  const now = options.now ?? Date.now;
  const db = openCacheDatabase(path);
  // A mapped copy of StoredSummary: bun:sqlite's bindings want an index signature.
  type Row = Pick<StoredSummary, keyof StoredSummary>;
  // An id beyond 2^53 is bound as its digits: INTEGER affinity stores and compares it exactly.
  const lookupStmt = db.query<Row, { model: string; story: ItemId; kind: string }>(
    `SELECT summary, source_sha256 AS sourceHash, comments, shown,
            latest_comment_at AS latestCommentAt, updates, created_at AS createdAt
     FROM story_summaries WHERE model = $model AND story_id = $story AND kind = $kind`,
  );
  const storeStmt = db.query<unknown, Row & { model: string; story: ItemId; kind: string }>(
    `INSERT OR REPLACE INTO story_summaries
       (model, story_id, kind, source_sha256, comments, shown, latest_comment_at, updates, summary, created_at)
     VALUES ($model, $story, $kind, $sourceHash, $comments, $shown, $latestCommentAt, $updates, $summary, $createdAt)`,
  );
  const samplesStmt = db.query<TokenSample, { model: string }>(
    "SELECT kind, estimated, counted FROM token_samples WHERE model = $model ORDER BY id DESC",
  );
  const addSampleStmt = db.query<
    unknown,
    { model: string; kind: string; estimated: number; counted: number }
  >(
    `INSERT INTO token_samples (model, kind, estimated, counted)
     VALUES ($model, $kind, $estimated, $counted)`,
  );
  const forgetSamplesStmt = db.query<unknown, { model: string; keep: number }>(
    `DELETE FROM token_samples WHERE model = $model AND id NOT IN
       (SELECT id FROM token_samples WHERE model = $model ORDER BY id DESC LIMIT $keep)`,
  );
  const recordTokens = db.transaction((model: string, sample: TokenSample) => {
    addSampleStmt.run({ ...sample, model });
    forgetSamplesStmt.run({ model, keep: TOKEN_SAMPLES_KEPT });
  });
  type ModelKey = { server: string; model: string };
  const checkedStmt = db.query<CheckedModel, ModelKey>(
    `SELECT context_length AS contextLength, placement FROM checked_models
     WHERE server = $server AND model = $model`,
  );
  const rememberStmt = db.query<
    unknown,
    ModelKey & { contextLength: number | null; placement: string | null; at: number }
  >(
    `INSERT OR REPLACE INTO checked_models (server, model, context_length, placement, checked_at)
     VALUES ($server, $model, $contextLength, $placement, $at)`,
  );
  const lastRunStmt = db.query<{ id: number; at: number }, []>(
    "SELECT id, at FROM runs ORDER BY id DESC LIMIT 1",
  );
  // As text: a number would round an id beyond 2^53.
  const runStoriesStmt = db.query<{ story_id: string; points: number }, { run: number }>(
    "SELECT CAST(story_id AS TEXT) AS story_id, points FROM run_stories WHERE run_id = $run",
  );
  const addRunStmt = db.query<{ id: number }, { at: number }>(
    "INSERT INTO runs (at) VALUES ($at) RETURNING id",
  );
  const addStoryStmt = db.query<unknown, { run: number; story: ItemId; points: number }>(
    "INSERT OR REPLACE INTO run_stories (run_id, story_id, points) VALUES ($run, $story, $points)",
  );
  const forgetStmt = db.query<unknown, { keep: number }>(
    "DELETE FROM runs WHERE id NOT IN (SELECT id FROM runs ORDER BY id DESC LIMIT $keep)",
  );
  const recordRun = db.transaction(
    (at: number, stories: readonly { id: ItemId; points: number }[]) => {
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
      const points = new Map<ItemId, number>();
      for (const row of runStoriesStmt.all({ run: run.id })) {
        points.set(itemId(row.story_id), row.points);
      }
      return { at: run.at, points };
    },
    recordRun(at, stories) {
      recordRun.immediate(at, stories);
    },
    lookup(model, storyId, kind) {
      return (
        lookupStmt.get({ model: normaliseModelName(model), story: storyId, kind }) ?? undefined
      );
    },
    store(model, key, entry) {
      storeStmt.run({
        ...entry,
        model: normaliseModelName(model),
        story: key.storyId,
        kind: key.kind,
        createdAt: now(),
      });
    },
    tokenSamples(model) {
      return samplesStmt.all({ model: normaliseModelName(model) });
    },
    recordTokens(model, sample) {
      recordTokens.immediate(normaliseModelName(model), {
        kind: sample.kind,
        estimated: sample.estimated,
        counted: sample.counted,
      });
    },
    checkedModel(server, model) {
      const row = checkedStmt.get({ server, model: normaliseModelName(model) });
      if (!row) return undefined;
      const placement = PLACEMENTS.find((known) => known === row.placement) ?? null;
      return { contextLength: row.contextLength, placement };
    },
    rememberModel(server, model, checked) {
      rememberStmt.run({ server, model: normaliseModelName(model), ...checked, at: now() });
    },
    close() {
      db.close();
    },
  };
}
