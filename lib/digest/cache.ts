import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { normaliseModelName } from "./ollama.ts";

export interface SummaryCache {
  get(model: string, prompt: string): string | undefined;
  set(model: string, prompt: string, summary: string): void;
  close(): void;
}

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
  return {
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
