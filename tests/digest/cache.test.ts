import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSummaryCache, promptHash } from "../../lib/digest/cache.ts";

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
