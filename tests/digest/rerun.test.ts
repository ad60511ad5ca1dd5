/**
 * Re-runs reuse work: the summary cache keeps each story's latest summaries with what they were
 * made from, so a digest an hour later summarises only what is new. Real HTTP to the fakes, a
 * real SQLite cache file, a fake clock.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import llama3Tokenizer from "llama3-tokenizer-js";
import { loadDigestConfig } from "../../lib/digest/config.ts";
import { runDigest } from "../../lib/digest/digest.ts";
import type { JsonStory } from "../../lib/digest/render/json.ts";
import { openSummaryCache } from "../../lib/digest/summarise/cache.ts";
import { answerReserve } from "../../lib/digest/summarise/prompt.ts";
import { createMemoryLogger } from "../../lib/log.ts";
import { articleHtml, articleParagraphs, type Page } from "../fakes/article-site.ts";
import { grownThread, type ShapedThread, shapedThread } from "../fakes/digest-corpus.ts";
import { type DigestWorldOptions, startDigestWorld } from "../fakes/digest-world.ts";
import { commentHit, type Hit, storyHit } from "../fakes/hn-search.ts";
import {
  echoTitle,
  type FakeOllamaOptions,
  type GenerateBody,
  promptKind,
} from "../fakes/ollama.ts";

setDefaultTimeout(30_000);

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const HOUR = 3_600_000;
const SHAPE = { total: 40, topLevel: 10, largest: [12, 6, 4] } as const;
const BODY = articleParagraphs(12);

interface NewsStory {
  hit: Hit;
  thread: ShapedThread;
  path: string;
}

function newsStory(n: number): NewsStory {
  const path = `/a/${n}`;
  const hit = storyHit({ title: `Story ${n}`, url: path, num_comments: SHAPE.total });
  return { hit, thread: shapedThread(Number(hit.objectID), SHAPE, 40 + n), path };
}

/** The front page as the search API shows it, each thread grown by `growth`. */
function frontPage(stories: readonly NewsStory[], growth = 0) {
  const comments: Record<number, Hit[]> = {};
  const hits = stories.map((story) => {
    const list = growth > 0 ? grownThread(story.thread, growth) : story.thread.hits;
    comments[Number(story.hit.objectID)] = list;
    return { ...story.hit, num_comments: list.length };
  });
  const pages: Record<string, Page> = Object.fromEntries(
    stories.map((story) => [story.path, { body: articleHtml(String(story.hit.title), BODY) }]),
  );
  return { stories: hits, comments, pages };
}

/** One digest (JSON) with the cache in `home` at the clock's time; the model's prompts. */
async function digestAt(
  home: string,
  at: number,
  news: {
    stories: Hit[];
    comments: Record<number, Hit[]>;
    pages: Record<string, Page>;
  },
  options: {
    countTokens?: (text: string) => number;
    generate?: FakeOllamaOptions["generate"];
    intercept?: DigestWorldOptions["intercept"];
    /** A CPU's rates and this --time-budget (default: a GPU, no budget). */
    cpuBudget?: string;
  } = {},
) {
  const { countTokens, generate, intercept, cpuBudget } = options;
  const cpu = countTokens !== undefined || cpuBudget !== undefined;
  using world = startDigestWorld({
    ...news,
    intercept,
    ollama: {
      generate,
      ...(cpuBudget ? { placement: "cpu" as const } : {}),
      ...(cpu ? { machine: { prefillPerSecond: 24, decodePerSecond: 11, countTokens } } : {}),
    },
  });
  const config = loadDigestConfig(
    { ...world.env, XDG_CACHE_HOME: home },
    {
      format: "json",
      limit: String(news.stories.length),
      ...(cpuBudget ? { "time-budget": cpuBudget } : {}),
    },
  );
  const chunks: string[] = [];
  const logger = createMemoryLogger();
  const result = await runDigest(config, {
    stdout: { write: (text: string) => void chunks.push(text) },
    stderr: { write() {} },
    logger,
    now: () => at,
    openCache: (path) => openSummaryCache(path, { now: () => at }),
  });
  const stories = (JSON.parse(chunks.join("")) as { stories: JsonStory[] }).stories;
  return { stories, calls: world.ollama.generateCalls, logger, stats: result.stats };
}

function cacheHome(): string {
  const dir = mkdtempSync(join(tmpdir(), "digest-rerun-"));
  dirs.push(dir);
  return dir;
}

const T0 = Date.parse("2025-08-03T08:00:00Z");

/** A model whose runner crashes (HTTP 500) on one story's prompts and answers the others. */
function crashesOn(title: string) {
  return (body: GenerateBody) =>
    body.prompt.includes(`: ${title}\n`)
      ? new Response("model runner crashed", { status: 500 })
      : echoTitle(body);
}

function discussionCalls(calls: readonly GenerateBody[]): GenerateBody[] {
  return calls.filter((call) => promptKind(call.prompt) === "discussion");
}

describe("a re-run an hour later", () => {
  test("threads 10 % longer and two new stories: only the new stories are summarised, both halves", async () => {
    const home = cacheHome();
    const stories = Array.from({ length: 5 }, (_, i) => newsStory(i + 1));
    const first = await digestAt(home, T0, frontPage(stories));
    expect(first.calls).toHaveLength(10);

    const later = [...stories.slice(0, 3), newsStory(6), newsStory(7)];
    const second = await digestAt(home, T0 + HOUR, frontPage(later, 0.1));
    const titles = second.calls.map((call) => /^Story: (.*)$/m.exec(call.prompt)?.[1]);
    expect(titles.sort()).toEqual(["Story 6", "Story 6", "Story 7", "Story 7"]);
    for (const story of second.stories.slice(0, 3)) {
      expect(story.discussionSummary).toBe(`Summary of the discussion of ${story.title}.`);
      expect(story.notes).toEqual([
        "Discussion summary as of 40 of 44 comments, written 1 hour ago.",
      ]);
      expect(story.commentsTotal).toBe(44);
    }
    for (const story of second.stories.slice(3)) {
      expect(story.articleSummary).toBe(`Summary of the article of ${story.title}.`);
      expect(story.discussionSummary).toBe(`Summary of the discussion of ${story.title}.`);
    }
  });

  test("a thread grown by half: updated from the previous summary plus only the new comments", async () => {
    const home = cacheHome();
    const story = newsStory(1);
    await digestAt(home, T0, frontPage([story]));
    const second = await digestAt(home, T0 + HOUR, frontPage([story], 0.5));
    const [call, ...others] = discussionCalls(second.calls);
    expect(others).toHaveLength(0);
    const prompt = call?.prompt ?? "";
    expect(prompt).toContain(
      'Summary so far:\n"""\nSummary of the discussion of Story 1.\n"""\n\nNew comments:\n"""\n',
    );
    // New comments only: an earlier comment appears only quoted in a new reply's header.
    expect(prompt).not.toMatch(/\] cmt\d{3} /);
    expect(prompt.match(/\] new\d{3} /g)?.length).toBe(20);
    expect(prompt).toMatch(/\[[^\]]+, replying to [^\]:]+: "cmt\d{3} [^"\]]*"\] new\d{3} /);
    expect(prompt).toEndWith(
      "The story now has 60 comments; all 20 new ones are shown.\n\nSummary:",
    );
    expect(second.calls.filter((c) => promptKind(c.prompt) === "article")).toHaveLength(0);
    expect(second.stories[0]?.notes).toEqual([
      "Discussion summary updated from the one written at 40 comments with the 20 comments posted since; the model saw 60 of 60 comments in all.",
    ]);
  });

  test("a few new comments after more than six hours: updated, not reused", async () => {
    const home = cacheHome();
    const story = newsStory(1);
    await digestAt(home, T0, frontPage([story]));
    const second = await digestAt(home, T0 + 7 * HOUR, frontPage([story], 0.1));
    expect(discussionCalls(second.calls)).toHaveLength(1);
    expect(discussionCalls(second.calls)[0]?.prompt).toContain("Summary so far:");
  });

  test("a budget that runs out before a story's turn shows its earlier summary, noted, not nothing", async () => {
    const home = cacheHome();
    const stories = [1, 2, 3, 4, 5, 6].map(newsStory);
    await digestAt(home, T0, frontPage(stories));
    // Every thread grown by half: each discussion needs the model, which has time for few.
    const second = await digestAt(home, T0 + HOUR, frontPage(stories, 0.5), { cpuBudget: "2m" });
    const updated = discussionCalls(second.calls).length;
    expect(updated).toBeGreaterThan(0);
    expect(updated).toBeLessThan(6);
    const late = second.stories.slice(updated);
    expect(late.length).toBeGreaterThan(0);
    for (const story of late) {
      expect(story.discussionSummary).toBe(`Summary of the discussion of ${story.title}.`);
      expect(story.notes).toContain(
        "Discussion summary could not be brought up to date within the time budget; the earlier one is shown.",
      );
    }
    expect(second.stats.leftOut).toBeUndefined();
  });

  test("an unchanged front page: no model call, and no note for a discussion shown whole", async () => {
    const home = cacheHome();
    const stories = [newsStory(1)];
    await digestAt(home, T0, frontPage(stories));
    const second = await digestAt(home, T0 + 30 * HOUR, frontPage(stories));
    expect(second.calls).toHaveLength(0);
    expect(second.stories[0]).toMatchObject({ notes: [], commentsShown: 40, commentsTotal: 40 });
  });
});

describe("a re-run when the model, a site or the search API fails", () => {
  test("the model failing on a re-run: the earlier summaries are shown, marked as older, and counted as failed", async () => {
    const home = cacheHome();
    const story = newsStory(1);
    await digestAt(home, T0, frontPage([story]));
    const later = frontPage([story, newsStory(2)], 0.5);
    const title = String(story.hit.title);
    later.pages[story.path] = { body: articleHtml(title, [...BODY, "A paragraph added since."]) };
    // The runner crashes on the first story's prompts only, so the run as a whole still succeeds.
    const second = await digestAt(home, T0 + 3 * HOUR, later, { generate: crashesOn(title) });
    expect(second.calls).toHaveLength(4);
    expect(second.stats).toMatchObject({ failed: 2, generated: 2 });
    const shown = second.stories[0];
    expect(shown?.articleSummary).toBe("Summary of the article of Story 1.");
    expect(shown?.discussionSummary).toBe("Summary of the discussion of Story 1.");
    expect(shown?.commentsShown).toBe(40);
    expect(shown?.commentsTotal).toBe(60);
    expect(shown?.notes).toEqual([
      "Article summary of an earlier version of the page, written 3 hours ago.",
      expect.stringMatching(
        /^Article summary could not be brought up to date \(.*500.*\); the earlier one is shown\.$/,
      ),
      "Discussion summary as of 40 of 60 comments, written 3 hours ago.",
      expect.stringMatching(
        /^Discussion summary could not be brought up to date \(.*500.*\); the earlier one is shown\.$/,
      ),
    ]);
  });

  test("a site down on a re-run: the article's earlier summary is shown, marked, with no model call", async () => {
    const home = cacheHome();
    const story = newsStory(1);
    await digestAt(home, T0, frontPage([story]));
    const later = frontPage([story]);
    later.pages[story.path] = { status: 503, body: "Service Unavailable" };
    const second = await digestAt(home, T0 + 2 * HOUR, later);
    expect(second.calls).toHaveLength(0);
    expect(second.stats).toMatchObject({ cached: 2, generated: 0, failed: 0 });
    expect(second.stories[0]).toMatchObject({
      articleSummary: "Summary of the article of Story 1.",
      articleSource: "article",
      notes: [
        "The link gave no article this time (the site answered HTTP 503); the summary is of the article as it was 2 hours ago.",
      ],
    });
  });

  test("the comments unreadable on a re-run: the discussion's earlier summary is shown, marked, with no model call", async () => {
    const home = cacheHome();
    const story = newsStory(1);
    await digestAt(home, T0, frontPage([story]));
    // The search API refuses the comment queries (not retried), the front page still reads.
    const intercept = (url: URL) =>
      url.searchParams.get("tags")?.startsWith("comment,")
        ? new Response("Bad Request", { status: 400 })
        : undefined;
    const second = await digestAt(home, T0 + 3 * HOUR, frontPage([story], 0.5), { intercept });
    expect(second.calls).toHaveLength(0);
    expect(second.stats).toMatchObject({ cached: 2, generated: 0, failed: 0 });
    expect(second.stories[0]).toMatchObject({
      discussionSummary: "Summary of the discussion of Story 1.",
      commentsShown: 40,
      commentsTotal: 60,
    });
    expect(second.stories[0]?.notes).toEqual([
      expect.stringMatching(
        /^The comments could not be read this time \(.*400.*\); the summary is as of 40 of 60 comments, written 3 hours ago\.$/,
      ),
    ]);
  });

  test("a Show HN whose link failed on both runs: its post's summary is reused as such, not as an article's", async () => {
    const home = cacheHome();
    const story = newsStory(1);
    story.hit = { ...story.hit, story_text: "We built a thing. It reads the front page for you." };
    const down = () => {
      const page = frontPage([story]);
      page.pages[story.path] = { status: 503, body: "Service Unavailable" };
      return page;
    };
    const first = await digestAt(home, T0, down());
    expect(first.stories[0]?.articleSource).toBe("post");
    const second = await digestAt(home, T0 + 2 * HOUR, down());
    expect(second.calls).toHaveLength(0);
    const postNote =
      "The link gave no article (the site answered HTTP 503); the summary is of the post's own text.";
    expect(second.stories[0]).toMatchObject({
      articleSummary: "Summary of the article of Story 1.",
      articleSource: "post",
      notes: [postNote],
    });
    // The post's text edited since: summarised again, never shown as the article's summary.
    story.hit = { ...story.hit, story_text: "We built a thing. Now it reads the comments too." };
    const edited = await digestAt(home, T0 + 3 * HOUR, down());
    expect(edited.calls.map((call) => promptKind(call.prompt))).toEqual(["article"]);
    expect(edited.stories[0]).toMatchObject({ articleSource: "post", notes: [postNote] });
  });
});

describe("a re-run with more room than the cached summary had", () => {
  test("summaries starved by a CPU's budget: kept under the same budget, made again on a GPU", async () => {
    const home = cacheHome();
    const story = newsStory(1);
    const title = String(story.hit.title);
    const long = Array.from({ length: 150 }, (_, i) => `${BODY[i % BODY.length]} (${i + 1})`);
    const news = () => {
      const page = frontPage([story]);
      page.pages[story.path] = { body: articleHtml(title, long) };
      return page;
    };
    const cpu = await digestAt(home, T0, news(), { cpuBudget: "1m" });
    const starved = cpu.stories[0];
    // Under half the 40 a whole window shows (FULLER_NOW): starved, so a GPU run makes it again.
    expect(starved?.commentsShown).toBeLessThan(20);
    expect(starved?.articleShare).toBeLessThan(0.5);

    const sameBudget = await digestAt(home, T0 + HOUR, news(), { cpuBudget: "1m" });
    expect(sameBudget.calls).toHaveLength(0);
    expect(sameBudget.stories[0]?.commentsShown).toBe(starved?.commentsShown);

    const gpu = await digestAt(home, T0 + 2 * HOUR, news());
    const kinds = gpu.calls.map((call) => promptKind(call.prompt)).sort();
    expect(kinds).toEqual(["article", "discussion"]);
    expect(gpu.stories[0]).toMatchObject({ commentsShown: 40, commentsTotal: 40, articleShare: 1 });
    expect(gpu.stories[0]?.notes).toEqual([]);
  });

  test("a starved summary whose redo fails is shown with the notes it had, saying what failed", async () => {
    const home = cacheHome();
    const story = newsStory(1);
    const title = String(story.hit.title);
    const long = Array.from({ length: 150 }, (_, i) => `${BODY[i % BODY.length]} (${i + 1})`);
    const news = frontPage([story]);
    news.pages[story.path] = { body: articleHtml(title, long) };
    const cpu = await digestAt(home, T0, news, { cpuBudget: "1m" });
    const starved = cpu.stories[0];
    // A second, new story is summarised, so the run as a whole still succeeds.
    const later = frontPage([story, newsStory(2)]);
    later.pages[story.path] = { body: articleHtml(title, long) };
    const gpu = await digestAt(home, T0 + 2 * HOUR, later, { generate: crashesOn(title) });
    expect(gpu.calls).toHaveLength(4);
    expect(gpu.stats).toMatchObject({ failed: 2, generated: 2 });
    expect(gpu.stories[0]).toMatchObject({
      articleSummary: starved?.articleSummary,
      discussionSummary: starved?.discussionSummary,
      commentsShown: starved?.commentsShown,
      articleShare: starved?.articleShare,
    });
    const redoFailed = (kind: string) =>
      new RegExp(
        `^${kind} summary could not be made again from more of the text \\(.*500.*\\); the earlier one is shown\\.$`,
      );
    expect(gpu.stories[0]?.notes).toEqual([
      expect.stringMatching(/^The model saw \d+ % of the article \(/),
      expect.stringMatching(redoFailed("Article")),
      `The model saw ${starved?.commentsShown} of 40 comments.`,
      expect.stringMatching(redoFailed("Discussion")),
    ]);
  });

  test("a starved discussion whose thread grew is made again from the whole thread, not updated", async () => {
    const home = cacheHome();
    const story = newsStory(1);
    const cpu = await digestAt(home, T0, frontPage([story]), { cpuBudget: "1m" });
    expect(cpu.stories[0]?.commentsShown).toBeLessThan(20);
    const gpu = await digestAt(home, T0 + HOUR, frontPage([story], 0.5));
    const [call, ...others] = discussionCalls(gpu.calls);
    expect(others).toHaveLength(0);
    expect(call?.prompt).not.toContain("Summary so far:");
    expect(gpu.stories[0]).toMatchObject({ commentsShown: 60, commentsTotal: 60 });
  });
});

describe("notes and coverage", () => {
  test("deleted comments are not counted and earn no note; the JSON carries the coverage", async () => {
    const hit = storyHit({ title: "Small", url: "/a/1", num_comments: 4 });
    const id = Number(hit.objectID);
    const top = commentHit(id, { comment_text: "A thought." });
    const news = {
      stories: [hit],
      comments: {
        [id]: [
          top,
          commentHit(id, { parent_id: Number(top.objectID), comment_text: "A reply." }),
          commentHit(id, { comment_text: "" }),
          commentHit(id, { comment_text: "[deleted]" }),
        ],
      },
      pages: { "/a/1": { body: articleHtml("Small", BODY) } },
    };
    const { stories } = await digestAt(cacheHome(), T0, news);
    expect(stories[0]).toMatchObject({
      notes: [],
      commentsShown: 2,
      commentsTotal: 2,
      articleShare: 1,
    });
  });
});

describe("token calibration", () => {
  const llama3 = (text: string) => llama3Tokenizer.encode(text, { bos: false, eos: false }).length;

  test("prompts grow to fill the window once the model has said what it counts, never past it", async () => {
    const big = (n: number) => {
      const path = `/a/${n}`;
      const hit = storyHit({ title: `Busy ${n}`, url: path, num_comments: 366 });
      return { hit, thread: shapedThread(Number(hit.objectID), undefined, 60 + n), path };
    };
    const home = cacheHome();
    // The first run teaches the cache what Llama 3 counts; the second summarises other stories.
    const uncalibrated = await digestAt(home, T0, frontPage([big(1)]), { countTokens: llama3 });
    const calibrated = await digestAt(home, T0 + HOUR, frontPage([big(2)]), {
      countTokens: llama3,
    });
    const window = 8192 - answerReserve(8192);
    const before = discussionCalls(uncalibrated.calls).map((call) => llama3(call.prompt));
    const after = discussionCalls(calibrated.calls).map((call) => llama3(call.prompt));
    expect(Math.max(...before, ...after)).toBeLessThanOrEqual(window);
    expect(after[0] ?? 0).toBeGreaterThan((before[0] ?? 0) * 1.1);
    expect(after[0] ?? 0).toBeGreaterThan(window * 0.85);
  });
});
