import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import {
  openSummaryCache,
  RUNS_KEPT,
  sourceHash,
  TOKEN_SAMPLES_KEPT,
} from "../../../lib/digest/summarise/cache.ts";
import { storedSummary } from "../../fakes/stored-summary.ts";
import { tempDirs } from "../../fakes/temp-dirs.ts";

const tempDir = tempDirs("digest-cache-");

describe("sourceHash()", () => {
  test("is the hex SHA-256 of the parts, each prefixed with its length", () => {
    expect(sourceHash(["abc"])).toBe(new Bun.CryptoHasher("sha256").update("3:abc").digest("hex"));
    // Parts cannot run into each other.
    expect(sourceHash(["ab", "c"])).not.toBe(sourceHash(["a", "bc"]));
  });
});

/** What a run stores: the cache adds when. */
const { createdAt: _, ...entry } = storedSummary();

describe("openSummaryCache()", () => {
  test("returns what was stored for the same model, story and kind, with when", () => {
    let now = 1000;
    const cache = openSummaryCache(":memory:", { now: () => now });
    expect(cache.lookup("llama3.2", 7, "discussion")).toBeUndefined();
    cache.store("llama3.2", { storyId: 7, kind: "discussion" }, entry);
    now = 2000;
    expect(cache.lookup("llama3.2", 7, "discussion")).toEqual({ ...entry, createdAt: 1000 });
    expect(cache.lookup("llama3.2", 7, "article")).toBeUndefined();
    expect(cache.lookup("llama3.2", 8, "discussion")).toBeUndefined();
    expect(cache.lookup("mistral", 7, "discussion")).toBeUndefined();
    cache.close();
  });

  test("keeps an article's share of the text as a fraction", () => {
    const cache = openSummaryCache(":memory:");
    cache.store("m", { storyId: 1, kind: "article" }, { ...entry, comments: 0, shown: 0.375 });
    expect(cache.lookup("m", 1, "article")?.shown).toBe(0.375);
    cache.close();
  });

  test("treats a model name with and without :latest as the same model", () => {
    const cache = openSummaryCache(":memory:");
    cache.store("llama3.2", { storyId: 1, kind: "article" }, entry);
    expect(cache.lookup("llama3.2:latest", 1, "article")?.summary).toBe("summary");
    cache.close();
  });

  test("remembers each model's last check per server, the newest replacing the older", () => {
    const cache = openSummaryCache(":memory:");
    const [laptop, gpuBox] = ["http://localhost:11434", "http://gpu-box:11434"];
    expect(cache.checkedModel(laptop, "llama3.2")).toBeUndefined();
    cache.rememberModel(laptop, "llama3.2", { contextLength: 131072, placement: "gpu" });
    cache.rememberModel(laptop, "llama3.2:latest", { contextLength: 8192, placement: "cpu" });
    cache.rememberModel(laptop, "openai m", { contextLength: null, placement: null });
    expect(cache.checkedModel(laptop, "llama3.2")).toEqual({
      contextLength: 8192,
      placement: "cpu",
    });
    expect(cache.checkedModel(laptop, "openai m")).toEqual({
      contextLength: null,
      placement: null,
    });
    expect(cache.checkedModel(gpuBox, "llama3.2")).toBeUndefined();
    cache.close();
  });

  test("creates its directory and keeps entries across opens", () => {
    const path = join(tempDir(), "nested", "hn-digest", "summaries.sqlite");
    const first = openSummaryCache(path);
    first.store("m", { storyId: 1, kind: "article" }, { ...entry, summary: "kept" });
    first.close();
    const second = openSummaryCache(path);
    expect(second.lookup("m", 1, "article")?.summary).toBe("kept");
    second.close();
  });

  test("keeps only the latest summary of a story's discussion", () => {
    const cache = openSummaryCache(":memory:");
    cache.store("m", { storyId: 1, kind: "discussion" }, { ...entry, summary: "old" });
    cache.store("m", { storyId: 1, kind: "discussion" }, { ...entry, summary: "new", updates: 1 });
    expect(cache.lookup("m", 1, "discussion")).toMatchObject({ summary: "new", updates: 1 });
    cache.close();
  });

  test("drops the prompt-keyed table of earlier versions", () => {
    const path = join(tempDir(), "summaries.sqlite");
    const old = new Database(path);
    old.run(
      "CREATE TABLE summaries (model TEXT, prompt_sha256 TEXT, summary TEXT, created_at INTEGER)",
    );
    old.close();
    openSummaryCache(path).close();
    const db = new Database(path, { readonly: true });
    expect(db.query("SELECT name FROM sqlite_master WHERE name = 'summaries'").get()).toBeNull();
    db.close();
  });
});

describe("openSummaryCache() token samples", () => {
  test("keeps each model's latest samples, newest first", () => {
    const cache = openSummaryCache(":memory:");
    for (let i = 1; i <= TOKEN_SAMPLES_KEPT + 5; i++) {
      cache.recordTokens("llama3.2", { kind: "article", estimated: 1000, counted: 800 + i });
    }
    cache.recordTokens("mistral", { kind: "discussion", estimated: 1000, counted: 1100 });
    const samples = cache.tokenSamples("llama3.2:latest");
    expect(samples).toHaveLength(TOKEN_SAMPLES_KEPT);
    expect(samples[0]).toEqual({
      kind: "article",
      estimated: 1000,
      counted: 800 + TOKEN_SAMPLES_KEPT + 5,
    });
    expect(cache.tokenSamples("mistral")).toEqual([
      { kind: "discussion", estimated: 1000, counted: 1100 },
    ]);
    cache.close();
  });
});

describe("openSummaryCache() run history", () => {
  test("remembers each run's stories and points, the latest first, and forgets old runs", () => {
    const file = join(mkdtempSync(join(tmpdir(), "digest-runs-")), "summaries.sqlite");
    const cache = openSummaryCache(file);
    expect(cache.lastRun()).toBeNull();
    cache.recordRun(1000, [
      { id: 1, points: 10 },
      { id: 2, points: 20 },
    ]);
    cache.recordRun(2000, [{ id: 2, points: 25 }]);
    expect(cache.lastRun()).toEqual({ at: 2000, points: new Map([[2, 25]]) });
    for (let i = 0; i < RUNS_KEPT + 5; i++) cache.recordRun(3000 + i, [{ id: i, points: i }]);
    expect(cache.lastRun()?.at).toBe(3000 + RUNS_KEPT + 4);
    cache.close();
    const db = new Database(file, { readonly: true });
    expect(db.query("SELECT count(*) AS n FROM runs").get()).toEqual({ n: RUNS_KEPT });
    expect(db.query("SELECT count(*) AS n FROM run_stories").get()).toEqual({ n: RUNS_KEPT });
    db.close();
    rmSync(dirname(file), { recursive: true, force: true });
  });
});
