import { Database } from "bun:sqlite";
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { openSummaryCache, promptHash, RUNS_KEPT } from "../../../lib/digest/summarise/cache.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "digest-cache-"));
  dirs.push(dir);
  return dir;
}

describe("promptHash()", () => {
  test("is the hex SHA-256 of the prompt", () => {
    expect(promptHash("abc")).toBe(
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
  });
});

describe("openSummaryCache()", () => {
  test("returns what was stored for the same model and prompt", () => {
    const cache = openSummaryCache(":memory:");
    expect(cache.get("llama3.2", "prompt")).toBeUndefined();
    cache.set("llama3.2", "prompt", "summary");
    expect(cache.get("llama3.2", "prompt")).toBe("summary");
    cache.close();
  });

  test("misses for another model or a changed prompt", () => {
    const cache = openSummaryCache(":memory:");
    cache.set("llama3.2", "prompt", "summary");
    expect(cache.get("mistral", "prompt")).toBeUndefined();
    expect(cache.get("llama3.2", "prompt, changed")).toBeUndefined();
    cache.close();
  });

  test("treats a model name with and without :latest as the same model", () => {
    const cache = openSummaryCache(":memory:");
    cache.set("llama3.2", "p", "s");
    expect(cache.get("llama3.2:latest", "p")).toBe("s");
    cache.close();
  });

  test("creates its directory and keeps entries across opens", () => {
    const path = join(tempDir(), "nested", "hn-digest", "summaries.sqlite");
    const first = openSummaryCache(path);
    first.set("m", "p", "kept");
    first.close();
    const second = openSummaryCache(path);
    expect(second.get("m", "p")).toBe("kept");
    second.close();
  });

  test("overwrites an entry stored twice", () => {
    const cache = openSummaryCache(":memory:");
    cache.set("m", "p", "old");
    cache.set("m", "p", "new");
    expect(cache.get("m", "p")).toBe("new");
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
