/**
 * --language: summaries asked for in that language, the page dated in it and marked with it,
 * and a cache that never serves one language's summary to another. Real HTTP to the fakes, a
 * real SQLite cache file.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadDigestConfig } from "../../lib/digest/config.ts";
import { runDigest } from "../../lib/digest/digest.ts";
import { createMemoryLogger } from "../../lib/log.ts";
import { startDigestWorld } from "../fakes/digest-world.ts";
import { commentHit, storyHit } from "../fakes/hn-search.ts";

setDefaultTimeout(30_000);

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const AT = Date.parse("2026-11-25T14:53:00Z");

function textPost() {
  const hit = storyHit({ title: "Ask HN: What are you reading?", url: null, story_text: "Books?" });
  const id = Number(hit.objectID);
  return { stories: [hit], comments: { [id]: [commentHit(id), commentHit(id)] } };
}

async function page(
  world: ReturnType<typeof startDigestWorld>,
  home: string,
  flags: Record<string, string> = {},
) {
  const config = loadDigestConfig(
    { ...world.env, XDG_CACHE_HOME: home },
    { format: "html", limit: "1", ...flags },
  );
  const chunks: string[] = [];
  const { stats } = await runDigest(config, {
    stdout: { write: (text: string) => void chunks.push(text) },
    stderr: { write() {} },
    logger: createMemoryLogger(),
    now: () => AT,
    timeZone: "UTC",
  });
  return { html: chunks.join(""), stats };
}

describe("--language", () => {
  test("asks for German summaries and dates the page in German, its own words English", async () => {
    const home = mkdtempSync(join(tmpdir(), "digest-language-"));
    dirs.push(home);
    using world = startDigestWorld({ ...textPost(), ollama: {} });
    const { html } = await page(world, home, { language: "de" });
    expect(world.ollama.generateCalls.length).toBeGreaterThan(0);
    for (const call of world.ollama.generateCalls) {
      expect(call.prompt).toContain("of plain German prose");
    }
    expect(html).toContain('<html lang="de">');
    expect(html).toContain("Mittwoch, 25. November 2026 um 14:53 UTC");
    expect(html).toContain("Hacker News digest");
  });

  test("without it: English, as before, and lang=en", async () => {
    const home = mkdtempSync(join(tmpdir(), "digest-language-"));
    dirs.push(home);
    using world = startDigestWorld({ ...textPost(), ollama: {} });
    const { html } = await page(world, home);
    expect(world.ollama.generateCalls[0]?.prompt).toContain("of plain English prose");
    expect(html).toContain('<html lang="en">');
    expect(html).toContain("Wednesday 25 November 2026, 14:53 UTC");
  });

  test("the cache keeps each language's summaries apart", async () => {
    const home = mkdtempSync(join(tmpdir(), "digest-language-"));
    dirs.push(home);
    using world = startDigestWorld({ ...textPost(), ollama: {} });
    const english = await page(world, home);
    expect(english.stats).toEqual({ generated: 2, cached: 0, failed: 0 });
    const german = await page(world, home, { language: "de" });
    expect(german.stats).toEqual({ generated: english.stats.generated, cached: 0, failed: 0 });
    const germanAgain = await page(world, home, { language: "de" });
    expect(germanAgain.stats).toEqual({ generated: 0, cached: english.stats.generated, failed: 0 });
    const englishAgain = await page(world, home, { language: "en" });
    expect(englishAgain.stats.generated).toBe(0);
  });
});
