import { describe, expect, test } from "bun:test";
import { loadDigestConfig } from "../../lib/digest/config.ts";
import { fetchFrontPage } from "../../lib/digest/fetch/hn/client.ts";
import { digestStories, type PipelineStats } from "../../lib/digest/pipeline.ts";
import { createProgress } from "../../lib/digest/progress.ts";
import { openSummaryCache } from "../../lib/digest/summarise/cache.ts";
import { instruction } from "../../lib/digest/summarise/instruction.ts";
import { openModelClient } from "../../lib/digest/summarise/models/open-model.ts";
import type { StoryDigest } from "../../lib/digest/types.ts";
import { createMemoryLogger } from "../../lib/log.ts";
import { articleHtml, javascriptWallHtml } from "../fakes/article-site.ts";
import { busyThread } from "../fakes/digest-corpus.ts";
import { gate, startDigestWorld } from "../fakes/digest-world.ts";
import { commentHit, storyHit, textPost } from "../fakes/hn-search.ts";
import type { GenerateBody } from "../fakes/ollama.ts";
import { echoTitle, generateSuccess, promptKind } from "../fakes/ollama.ts";

const BODY = Array.from(
  { length: 10 },
  (_, i) =>
    `Paragraph ${i + 1} of a long enough article that Readability keeps as the main content.`,
);

/** n stories, each with an article page and two comments (one a reply). */
function newsOf(n: number) {
  const stories = Array.from({ length: n }, (_, i) =>
    storyHit({ title: `Story ${i + 1}`, url: `/a/${i + 1}` }),
  );
  const pages = Object.fromEntries(
    stories.map((_, i) => [`/a/${i + 1}`, { body: articleHtml(`Story ${i + 1}`, BODY) }]),
  );
  const comments = Object.fromEntries(
    stories.map((hit) => {
      const id = Number(hit.objectID);
      const top = commentHit(id, { comment_text: `First thoughts on ${hit.title}` });
      const reply = commentHit(id, { parent_id: Number(top.objectID), comment_text: "I disagree" });
      return [id, [reply, top]];
    }),
  );
  return { stories, pages, comments };
}

function callFor(calls: GenerateBody[], kind: "article" | "discussion"): GenerateBody | undefined {
  return calls.find((call) => promptKind(call.prompt) === kind);
}

function titleOf(body: GenerateBody): string {
  return /^(?:Title|Story): (.*)$/m.exec(body.prompt)?.[1] ?? "";
}

async function run(
  world: ReturnType<typeof startDigestWorld>,
  options: {
    flags?: Record<string, string>;
    env?: Record<string, string>;
    cache?: ReturnType<typeof openSummaryCache>;
    onStory?: (digest: StoryDigest) => void;
  } = {},
) {
  const config = loadDigestConfig(
    { ...world.env, ...options.env },
    { ...options.flags, cache: false },
  );
  const logger = createMemoryLogger();
  const { stories } = await fetchFrontPage(config.searchUrl, config.limit, {
    sleep: async () => {},
  });
  const stats: PipelineStats = { generated: 0, cached: 0, failed: 0 };
  const results: StoryDigest[] = [];
  for await (const digest of digestStories(stories, {
    config,
    model: openModelClient(config),
    cache: options.cache,
    logger,
    stats,
    sleep: async () => {},
    progress: createProgress({ write() {} }, { total: stories.length, titles: [] }),
  })) {
    options.onStory?.(digest);
    results.push(digest);
  }
  return { results, stats, logger };
}

describe("digestStories()", () => {
  test("summarises each story's article and discussion", async () => {
    const news = newsOf(2);
    using world = startDigestWorld(news);
    const { results, stats } = await run(world);
    expect(
      results.map((r) => [r.story.title, r.articleSummary, r.discussionSummary, r.notes]),
    ).toEqual([
      [
        "Story 1",
        "Summary of the article of Story 1.",
        "Summary of the discussion of Story 1.",
        [],
      ],
      [
        "Story 2",
        "Summary of the article of Story 2.",
        "Summary of the discussion of Story 2.",
        [],
      ],
    ]);
    expect(results[0]?.hnUrl).toBe(
      `https://news.ycombinator.com/item?id=${news.stories[0]?.objectID}`,
    );
    expect(stats).toEqual({ generated: 4, cached: 0, failed: 0 });
  });

  test("sends the article text and the threaded discussion to Ollama", async () => {
    using world = startDigestWorld(newsOf(1));
    await run(world);
    const article = callFor(world.ollama.generateCalls, "article");
    const discussion = callFor(world.ollama.generateCalls, "discussion");
    expect(article?.prompt).toContain("Paragraph 1 of a long enough article");
    expect(discussion?.prompt).toMatch(
      /\[c1 user\d+\] First thoughts on Story 1\n {2}\[c2 user\d+\] I disagree/,
    );
  });

  test("always sends num_ctx (8192 by default) and a matching num_predict", async () => {
    using world = startDigestWorld(newsOf(1));
    await run(world);
    expect(world.ollama.generateCalls.map((call) => call.options)).toEqual([
      { num_ctx: 8192, num_predict: 512 },
      { num_ctx: 8192, num_predict: 512 },
    ]);
  });

  test("sends the window OLLAMA_NUM_CTX asks for", async () => {
    using world = startDigestWorld(newsOf(1));
    await run(world, { env: { OLLAMA_NUM_CTX: "16384" } });
    expect(world.ollama.generateCalls[0]?.options).toEqual({ num_ctx: 16384, num_predict: 512 });
  });

  test("notes an answer that stopped at num_predict and keeps its finished sentences", async () => {
    using world = startDigestWorld({
      ...newsOf(1),
      ollama: {
        generate: (body) =>
          Response.json({
            ...generateSuccess(body.model, "First sentence. Second one is cut mid"),
            done_reason: "length",
          }),
      },
    });
    const { results } = await run(world);
    expect(results[0]?.articleSummary).toBe("First sentence.");
    expect(results[0]?.notes).toEqual([
      "The article summary was cut at the 512-token answer limit, after its last whole sentence.",
      "The discussion summary was cut at the 512-token answer limit, after its last whole sentence.",
    ]);
  });

  test("notes no cut when the answer stopped by itself, however it ends", async () => {
    using world = startDigestWorld({
      ...newsOf(1),
      ollama: {
        generate: (body) =>
          Response.json(generateSuccess(body.model, "First sentence. Second one is cut mid")),
      },
    });
    const { results } = await run(world);
    expect(results[0]?.articleSummary).toBe("First sentence. Second one is cut mid");
    expect(results[0]?.notes).toEqual([]);
  });

  test("fetches comments and articles while Ollama is still working", async () => {
    const news = newsOf(4);
    const allFetched = gate();
    let articleRequests = 0;
    using world = startDigestWorld({
      ...news,
      onArticleRequest: () => {
        articleRequests++;
        if (articleRequests === 4) allFetched.open();
      },
      ollama: {
        // The first summary is held until every article has been requested: a pipeline that
        // waited for Ollama before fetching the next story would never get here.
        generate: async (body, call) => {
          if (call === 1) await allFetched.promise;
          return echoTitle(body);
        },
      },
    });
    const { results } = await run(world);
    expect(results).toHaveLength(4);
    expect(world.ollama.generateCalls).toHaveLength(8);
  }, 5_000);

  test("runs one Ollama call at a time by default", async () => {
    using world = startDigestWorld(newsOf(3));
    await run(world);
    expect(world.ollama.generateCalls).toHaveLength(6);
    expect(world.ollama.maxInFlight).toBe(1);
  });

  test("runs up to --concurrency Ollama calls at once", async () => {
    const second = gate();
    using world = startDigestWorld({
      ...newsOf(3),
      ollama: {
        // The first call waits for a second one to arrive: only true concurrency gets past it.
        generate: async (body, call) => {
          if (call === 2) second.open();
          if (call === 1) await second.promise;
          return echoTitle(body);
        },
      },
    });
    await run(world, { flags: { concurrency: "2" } });
    expect(world.ollama.maxInFlight).toBe(2);
  }, 5_000);

  test("yields each story in front-page order as soon as it is ready", async () => {
    const release = gate();
    const yielded: string[] = [];
    using world = startDigestWorld({
      ...newsOf(3),
      ollama: {
        generate: async (body) => {
          // Only story 2's discussion is held, so one Ollama slot always stays free for story 1.
          const discussion = promptKind(body.prompt) === "discussion";
          if (discussion && titleOf(body) === "Story 2") await release.promise;
          return echoTitle(body);
        },
      },
    });
    const { results } = await run(world, {
      flags: { concurrency: "2" },
      onStory: (digest) => {
        yielded.push(digest.story.title);
        // Story 1 comes out while story 2 is still held in Ollama.
        if (digest.story.title === "Story 1") {
          expect(release.opened).toBe(false);
          release.open();
        }
      },
    });
    expect(yielded).toEqual(["Story 1", "Story 2", "Story 3"]);
    expect(results).toHaveLength(3);
  }, 5_000);

  test("keeps going when one story's summary fails", async () => {
    using world = startDigestWorld({
      ...newsOf(3),
      ollama: {
        generate: (body) =>
          titleOf(body) === "Story 2" && promptKind(body.prompt) === "article"
            ? Response.json({ error: "llama runner process has terminated" }, { status: 500 })
            : echoTitle(body),
      },
    });
    const { results, stats } = await run(world);
    expect(results[1]?.articleSummary).toBeNull();
    expect(results[1]?.discussionSummary).toBe("Summary of the discussion of Story 2.");
    expect(results[1]?.notes).toEqual([
      "Article summary failed: Ollama answered HTTP 500: llama runner process has terminated.",
    ]);
    expect(results[2]?.articleSummary).toBe("Summary of the article of Story 3.");
    expect(stats).toEqual({ generated: 5, cached: 0, failed: 1 });
  });

  test("summarises the discussion and explains a missing article (403)", async () => {
    const news = newsOf(1);
    using world = startDigestWorld({ ...news, pages: { "/a/1": { status: 403 } } });
    const { results } = await run(world);
    expect(results[0]?.articleSummary).toBeNull();
    expect(results[0]?.discussionSummary).toBe("Summary of the discussion of Story 1.");
    expect(results[0]?.notes).toEqual(["No article summary: the site answered HTTP 403."]);
  });

  test.each([
    [
      "a PDF",
      { contentType: "application/pdf", body: "%PDF" },
      "it is not an HTML page (application/pdf)",
    ],
    ["an oversize page", { streamBytes: 10_000_000 }, "it is too big (more than 2000000 bytes)"],
  ])("explains a missing article: %s", async (_, page, reason) => {
    using world = startDigestWorld({ ...newsOf(1), pages: { "/a/1": page } });
    const { results } = await run(world);
    expect(results[0]?.notes).toEqual([`No article summary: ${reason}.`]);
    expect(results[0]?.discussionSummary).not.toBeNull();
  });

  test("explains an article that timed out", async () => {
    using world = startDigestWorld({ ...newsOf(1), pages: { "/a/1": { hang: true } } });
    const { results } = await run(world, { env: { ARTICLE_TIMEOUT_MS: "100" } });
    expect(results[0]?.notes).toEqual(["No article summary: no answer within 100 ms."]);
    expect(results[0]?.discussionSummary).not.toBeNull();
  });

  test("summarises an Ask HN story from its own text, fetching nothing", async () => {
    const ask = storyHit({
      title: "Ask HN: How do you back up?",
      url: undefined,
      story_text: "I use tar &amp; cron.<p>What do you use?",
    });
    using world = startDigestWorld({ stories: [ask], comments: {} });
    const { results } = await run(world);
    expect(world.site.requests).toEqual([]);
    const prompt = callFor(world.ollama.generateCalls, "article")?.prompt;
    expect(prompt).toContain("I use tar & cron.\n\nWhat do you use?");
    expect(prompt).toContain("A text post on Hacker News.");
    expect(results[0]?.articleSummary).toBe(
      "Summary of the article of Ask HN: How do you back up?.",
    );
  });

  test("gives the model a Show HN author's own text beside the article", async () => {
    const show = storyHit({
      title: "Show HN: Tiny DB",
      url: "/a/1",
      story_text: "I built this over a year of weekends.<p>Feedback welcome!",
    });
    using world = startDigestWorld({
      stories: [show],
      pages: { "/a/1": { body: articleHtml("Tiny DB", BODY) } },
    });
    const { results } = await run(world);
    const prompt = callFor(world.ollama.generateCalls, "article")?.prompt ?? "";
    expect(prompt).toContain(
      `The poster's own text on Hacker News:\n"""\nI built this over a year of weekends.\n\nFeedback welcome!\n"""\n\nArticle text:\n"""\nParagraph 1`,
    );
    expect(results[0]?.articleSource).toBe("article and post");
  });

  test("summarises a post's own text when its link gives no article", async () => {
    const show = storyHit({ title: "Show HN: Thing", url: "/a/1", story_text: "My own words." });
    using world = startDigestWorld({ stories: [show], pages: { "/a/1": { status: 404 } } });
    const { results } = await run(world);
    expect(callFor(world.ollama.generateCalls, "article")?.prompt).toContain(
      'Article text:\n"""\nMy own words.\n"""',
    );
    expect(results[0]?.articleSource).toBe("post");
    expect(results[0]?.notes[0]).toBe(
      "The link gave no article (the site answered HTTP 404); the summary is of the post's own text.",
    );
  });

  test("shows a JavaScript wall's own description instead of summarising the wall", async () => {
    const news = newsOf(1);
    using world = startDigestWorld({
      ...news,
      pages: { "/a/1": { body: javascriptWallHtml("A collaborative whiteboard for diagrams.") } },
    });
    const { results } = await run(world);
    expect(callFor(world.ollama.generateCalls, "article")).toBeUndefined();
    expect(results[0]?.articleSummary).toBe("A collaborative whiteboard for diagrams.");
    expect(results[0]?.articleSource).toBe("description");
    expect(results[0]?.notes).toEqual([
      "No article summary: the page shows only a JavaScript, error or bot-check wall; the page's own description is shown instead.",
    ]);
  });

  test("explains a story with no link and no text, and one without comments", async () => {
    const bare = storyHit({ title: "Bare", url: undefined, num_comments: 0 });
    using world = startDigestWorld({ stories: [bare] });
    const { results } = await run(world);
    expect(results[0]?.notes).toEqual([
      "No article summary: the post has no link and no text.",
      "No discussion summary: there are no comments yet.",
    ]);
    expect(world.ollama.generateCalls).toEqual([]);
  });

  test("explains comments the search API would not give (429 forever)", async () => {
    using world = startDigestWorld({
      ...newsOf(1),
      intercept: (url) =>
        url.searchParams.get("tags")?.startsWith("comment")
          ? new Response("rate limited", { status: 429 })
          : undefined,
    });
    const { results } = await run(world);
    expect(results[0]?.articleSummary).toBe("Summary of the article of Story 1.");
    expect(results[0]?.discussionSummary).toBeNull();
    expect(results[0]?.notes[0]).toStartWith(
      "No discussion summary: the comments could not be read (Search API request failed (HTTP 429; gave up after 5 attempts)",
    );
  });

  test("notes how much of a huge article the model saw", async () => {
    const huge = articleHtml(
      "Huge",
      Array.from({ length: 3000 }, () => BODY[0] ?? ""),
    );
    using world = startDigestWorld({ ...newsOf(1), pages: { "/a/1": { body: huge } } });
    const { results } = await run(world);
    expect(results[0]?.notes).toEqual([
      expect.stringMatching(
        /^The model saw \d+ % of the article \([\d,]+ of 245,998 characters\)\.$/,
      ),
    ]);
    const prompt = callFor(world.ollama.generateCalls, "article")?.prompt ?? "";
    expect(prompt).toStartWith(instruction());
    expect(promptKind(prompt)).toBe("article");
    expect(prompt.length).toBeLessThan(8192 * 3.5);
    expect(prompt.length).toBeGreaterThan(7000 * 3.5);
  });

  test("shows the model every top-level comment of a 300-comment thread, and replies", async () => {
    const story = textPost("Busy", { story_text: "Text", num_comments: 300 });
    const thread = busyThread(Number(story.objectID));
    using world = startDigestWorld({
      stories: [story],
      comments: { [Number(story.objectID)]: thread.hits },
    });
    const { results } = await run(world, { flags: { "max-comments": "1000" } });
    const prompt = callFor(world.ollama.generateCalls, "discussion")?.prompt ?? "";
    for (const marker of thread.topLevelMarkers) expect(prompt).toContain(`] ${marker} `);
    const replies = thread.markers.slice(60).filter((marker) => prompt.includes(`] ${marker} `));
    expect(replies.length).toBeGreaterThan(20);
    expect(results[0]?.notes).toEqual([
      expect.stringMatching(
        /^The model saw \d+ of 300 comments \(60 of 60 top-level; \d+ of them only in part\)\.$/,
      ),
    ]);
  });

  test("says when --max-comments kept comments from being fetched", async () => {
    const story = textPost("Busy", { story_text: "Text", num_comments: 300 });
    using world = startDigestWorld({
      stories: [story],
      comments: { [Number(story.objectID)]: busyThread(Number(story.objectID)).hits },
    });
    const { results } = await run(world, { flags: { "max-comments": "20" } });
    expect(world.search.requests.at(-1)).toEndWith("&hitsPerPage=20");
    // Of 20 comments fetched at random from the thread, the replies whose parent was not
    // fetched are left out: the model never sees a reply without what it answers.
    expect(results[0]?.notes).toEqual([
      expect.stringMatching(
        /^The model saw \d+ of 300 comments \(\d+ of \d+ top-level\)\. Only 20 were fetched \(MAX_COMMENTS_PER_STORY \/ --max-comments\)\.$/,
      ),
    ]);
  });

  test("makes no Ollama call for summaries in the cache", async () => {
    using world = startDigestWorld(newsOf(2));
    const cache = openSummaryCache(":memory:");
    const first = await run(world, { cache });
    expect(world.ollama.generateCalls).toHaveLength(4);
    const second = await run(world, { cache });
    expect(world.ollama.generateCalls).toHaveLength(4);
    expect(second.stats).toEqual({ generated: 0, cached: 4, failed: 0 });
    expect(second.results).toEqual(first.results);
    cache.close();
  });

  test("does not cache failures", async () => {
    let fail = true;
    using world = startDigestWorld({
      ...newsOf(1),
      ollama: {
        generate: (body) =>
          fail ? Response.json({ error: "busy" }, { status: 503 }) : echoTitle(body),
      },
    });
    const cache = openSummaryCache(":memory:");
    await run(world, { cache });
    fail = false;
    const { results } = await run(world, { cache });
    expect(results[0]?.articleSummary).toBe("Summary of the article of Story 1.");
    cache.close();
  });
});
