/**
 * A re-run whose every summary comes from the cache sends the model server nothing: no check,
 * no load, no prompt. Real HTTP to the fakes (which log every request, whatever its path), a
 * real SQLite cache file.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { loadDigestConfig } from "../../lib/digest/config.ts";
import { runDigest } from "../../lib/digest/digest.ts";
import { openSummaryCache } from "../../lib/digest/summarise/cache.ts";
import { PreflightError } from "../../lib/digest/summarise/models/model-client.ts";
import { createMemoryLogger } from "../../lib/log.ts";
import { articleHtml } from "../fakes/article-site.ts";
import { type DigestWorldOptions, startDigestWorld } from "../fakes/digest-world.ts";
import { commentHit, type Hit, storyHit } from "../fakes/hn-search.ts";
import { DEFAULT_OPENAI_MODEL } from "../fakes/openai-server.ts";
import { tempDirs } from "../fakes/temp-dirs.ts";

setDefaultTimeout(30_000);

const cacheHome = tempDirs("digest-cached-start-");

/** Two stories, each with an article on the fake site and two comments. */
function news(): Pick<DigestWorldOptions, "stories" | "comments" | "pages"> {
  const stories: Hit[] = [];
  const comments: Record<number, Hit[]> = {};
  const pages: DigestWorldOptions["pages"] = {};
  for (const n of [1, 2]) {
    const path = `/story-${n}`;
    const hit = storyHit({ title: `Story ${n}`, url: path });
    const id = Number(hit.objectID);
    stories.push(hit);
    comments[id] = [commentHit(id), commentHit(id)];
    pages[path] = {
      body: articleHtml(
        `Story ${n}`,
        Array.from(
          { length: 12 },
          (_, i) => `Paragraph ${i + 1} of story ${n}, long enough for Readability to keep it.`,
        ),
      ),
    };
  }
  return { stories, comments, pages };
}

async function digest(world: ReturnType<typeof startDigestWorld>, home: string, limit = 2) {
  const config = loadDigestConfig(
    { ...world.env, XDG_CACHE_HOME: home },
    { format: "json", limit: String(limit) },
  );
  const logger = createMemoryLogger();
  const { stats } = await runDigest(config, {
    stdout: { write() {} },
    stderr: { write() {} },
    logger,
  });
  return { stats, logger };
}

describe("a re-run served wholly by the cache", () => {
  test("sends Ollama no request at all: no check, no load, no prompt", async () => {
    const home = cacheHome();
    using world = startDigestWorld({ ...news(), ollama: { placement: "cpu" } });
    const first = await digest(world, home);
    expect(first.stats).toEqual({ generated: 4, cached: 0, failed: 0 });
    expect(world.ollama.requests).toContain("GET /api/tags");
    expect(world.ollama.requests).toContain("GET /api/ps");
    world.ollama.requests.length = 0;
    const again = await digest(world, home);
    expect(again.stats).toEqual({ generated: 0, cached: 4, failed: 0 });
    expect(world.ollama.requests).toEqual([]);
    // The budget still knows the model runs on the CPU, from the first run's check.
    expect(again.logger.lines.join("\n")).toContain("llama3.2 runs on the CPU");
  });

  test("sends an OpenAI-compatible server no request at all when its model is named", async () => {
    const home = cacheHome();
    using world = startDigestWorld({ ...news(), openai: {} });
    const openai = world.openai;
    if (!openai) throw new Error("no OpenAI-compatible server");
    Object.assign(world.env, { OPENAI_MODEL: DEFAULT_OPENAI_MODEL });
    await digest(world, home);
    expect(openai.requests).toContain("GET /v1/models");
    openai.requests.length = 0;
    const again = await digest(world, home);
    expect(again.stats).toEqual({ generated: 0, cached: 4, failed: 0 });
    expect(openai.requests).toEqual([]);
    expect(world.ollama.requests).toEqual([]);
  });

  test("with one story new, checks the server before that story's first prompt, and loads nothing apart", async () => {
    const home = cacheHome();
    using world = startDigestWorld({ ...news(), ollama: {} });
    await digest(world, home, 1);
    world.ollama.requests.length = 0;
    const loadsBefore = world.ollama.loadCalls.length;
    const again = await digest(world, home, 2);
    expect(again.stats).toEqual({ generated: 2, cached: 2, failed: 0 });
    const firstPrompt = world.ollama.requests.indexOf("POST /api/generate");
    expect(world.ollama.requests.slice(0, firstPrompt)).toContain("GET /api/tags");
    expect(world.ollama.requests).not.toContain("GET /api/ps");
    expect(world.ollama.loadCalls.length).toBe(loadsBefore);
  });

  test("remembers what that check found: a model pulled again with another context length", async () => {
    const home = cacheHome();
    const stories = news();
    using before = startDigestWorld({ ...stories, ollama: { contextLength: 131072 } });
    await digest(before, home, 1);
    before.stop();
    // The same URL: a fake on the port the first one had is not to be had, so the cache is told.
    const cache = openSummaryCache(join(home, "hn-digest", "summaries.sqlite"));
    using after = startDigestWorld({ ...stories, ollama: { contextLength: 4096 } });
    const remembered = cache.checkedModel(before.ollama.url, "llama3.2");
    if (!remembered) throw new Error("the first run's check was not remembered");
    cache.rememberModel(after.ollama.url, "llama3.2", remembered);
    const again = await digest(after, home, 2);
    expect(again.stats.generated).toBe(2);
    expect(cache.checkedModel(after.ollama.url, "llama3.2")).toEqual({
      contextLength: 4096,
      placement: "gpu",
    });
    cache.close();
  });

  test("stops with the check's own message when the model has gone since the last run", async () => {
    const home = cacheHome();
    using before = startDigestWorld({ ...news(), ollama: {} });
    await digest(before, home, 1);
    before.stop();
    using after = startDigestWorld({ ...news(), ollama: { models: ["mistral:latest"] } });
    const error = await digest(after, home).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(PreflightError);
    expect((error as Error).message).toContain("has no model llama3.2:latest");
    expect(after.ollama.generateCalls).toEqual([]);
  });
});
