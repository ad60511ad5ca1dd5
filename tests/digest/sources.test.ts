import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseFeed } from "@rowanmanning/feed-parser";
import { simpleParser } from "mailparser";
import { SearchApiError } from "../../lib/digest/fetch/search-fetch.ts";
import type { JsonStory } from "../../lib/digest/render/json.ts";
import { articleHtml, articleParagraphs } from "../fakes/article-site.ts";
import { RUN_AT, runDigestCommand } from "../fakes/digest-run.ts";
import { startDigestWorld } from "../fakes/digest-world.ts";
import { commentHit, storyHit } from "../fakes/hn-search.ts";
import { lobstersComment, lobstersStory, startFakeLobsters } from "../fakes/lobsters.ts";
import { echoTitle } from "../fakes/ollama.ts";
import { startFakeSmtp } from "../fakes/smtp.ts";
import { tempDirs } from "../fakes/temp-dirs.ts";

setDefaultTimeout(30_000);

const tempDir = tempDirs("digest-sources-");

const BODY = articleParagraphs();

/**
 * Hacker News with two stories, Lobsters with two, one link on both: the allocator article,
 * with a comment tree on each site.
 */
function twoSites() {
  const shared = storyHit({
    title: "A faster allocator",
    url: "/malloc",
    points: 300,
    num_comments: 2,
  });
  const hnOnly = storyHit({ title: "HN only", url: "/hn-only", points: 100, num_comments: 1 });
  const sharedId = Number(shared.objectID);
  const top = commentHit(sharedId, { author: "hnuser", comment_text: "Per-thread caches win." });
  const world = startDigestWorld({
    stories: [shared, hnOnly],
    comments: {
      [sharedId]: [
        top,
        commentHit(sharedId, { parent_id: Number(top.objectID), comment_text: "Not on NUMA." }),
      ],
      [Number(hnOnly.objectID)]: [commentHit(Number(hnOnly.objectID))],
    },
    pages: {
      "/malloc": { body: articleHtml("A faster allocator", BODY) },
      "/hn-only": { body: articleHtml("HN only", BODY) },
      "/lobsters-only": { body: articleHtml("Lobsters only", BODY) },
    },
    ollama: { generate: (body) => echoTitle(body) },
  });
  const lobsters = startFakeLobsters({
    stories: (base) => [
      lobstersStory(base, {
        short_id: "lobonly",
        title: "Lobsters only",
        url: `${world.site.url}/lobsters-only`,
        score: 25,
        comment_count: 3,
        tags: ["rust", "performance"],
      }),
      // The same article, linked with www-less host, a trailing slash and a tracking parameter.
      lobstersStory(base, {
        short_id: "shared",
        title: "A faster allocator (2025)",
        url: `${world.site.url}/malloc/?utm_source=lobsters`,
        score: 40,
        comment_count: 2,
        tags: ["c"],
      }),
    ],
    comments: (base) => ({
      lobonly: [
        lobstersComment(base, {
          short_id: "aaa111",
          commenting_user: "crab",
          comment: "<p>Borrow checker &gt; GC.</p>",
        }),
        lobstersComment(base, {
          short_id: "aaa222",
          parent: "aaa111",
          commenting_user: "gopher",
          comment: "<p>Depends on the workload.</p>",
        }),
        lobstersComment(base, { short_id: "aaa333", is_deleted: true, comment: "" }),
      ],
      shared: [
        lobstersComment(base, {
          short_id: "bbb111",
          commenting_user: "lobsteruser",
          comment: "<p>Jemalloc did this first.</p>",
        }),
        lobstersComment(base, {
          short_id: "bbb222",
          parent: "bbb111",
          commenting_user: "other",
          comment: "<p>And tcmalloc.</p>",
        }),
      ],
    }),
  });
  const env = { ...world.env, LOBSTERS_URL: lobsters.url, XDG_CACHE_HOME: tempDir() };
  const stop = () => {
    world.stop();
    lobsters.stop();
  };
  return { world, lobsters, env, [Symbol.dispose]: stop };
}

describe("--source hn,lobsters", () => {
  test("takes each site's stories in turn, a link on both once with both discussions", async () => {
    using sites = twoSites();
    const run = await runDigestCommand(sites.env, ["--source", "hn,lobsters", "--format", "json"]);
    expect(run.error).toBeUndefined();
    const doc = JSON.parse(run.stdout) as { stories: JsonStory[] };
    expect(doc.stories.map((story) => [story.title, story.source])).toEqual([
      ["A faster allocator", "hn"],
      ["Lobsters only", "lobsters"],
      ["HN only", "hn"],
    ]);
    const [shared, lobstersOnly] = doc.stories as [JsonStory, JsonStory];
    expect(
      shared.discussions.map((discussion) => [discussion.source, discussion.comments]),
    ).toEqual([
      ["hn", 2],
      ["lobsters", 2],
    ]);
    expect(shared.discussions[1]?.url).toBe(`${sites.lobsters.url}/s/shared/lobsters_story_shared`);
    expect(shared.numComments).toBe(4);
    expect(shared.tags).toEqual(["c"]);
    expect(lobstersOnly).toMatchObject({
      id: "lobsters-lobonly",
      hnUrl: `${sites.lobsters.url}/s/lobonly/lobsters_story_lobonly`,
      tags: ["rust", "performance"],
      discussionSummary: "Summary of the discussion of Lobsters only.",
      commentsTotal: 2,
    });
    // One discussion prompt holds both sites' comments of the shared link.
    const prompts = sites.world.ollama.generateCalls.map((call) => call.prompt);
    const sharedPrompt = prompts.find(
      (prompt) => prompt.includes("Story: A faster allocator") && prompt.includes("Comments:"),
    );
    expect(sharedPrompt).toContain("Per-thread caches win.");
    expect(sharedPrompt).toContain("Jemalloc did this first.");
    expect(sharedPrompt).toContain("And tcmalloc.");
    // The article of the shared link is fetched and summarised once.
    expect(
      prompts.filter(
        (prompt) =>
          prompt.includes("Summarise the article") && prompt.includes("A faster allocator"),
      ),
    ).toHaveLength(1);
    // Lobsters is asked politely: its front page, then each story's JSON, named.
    expect(sites.lobsters.requests.sort()).toEqual([
      "/hottest.json",
      "/s/lobonly.json",
      "/s/shared.json",
    ]);
    expect(sites.lobsters.userAgents.every((agent) => agent?.startsWith("hn-digest/"))).toBe(true);
  });

  test("labels each story's discussions by site in Markdown and HTML", async () => {
    using sites = twoSites();
    const markdown = await runDigestCommand(sites.env, ["--source", "lobsters,hn"]);
    expect(markdown.error).toBeUndefined();
    // Lobsters first in the list: the shared link keeps its Lobsters story and gains HN's discussion.
    expect(markdown.stdout).toContain("## 1. [Lobsters only]");
    expect(markdown.stdout).toContain("## 2. [A faster allocator (2025)]");
    expect(markdown.stdout).toContain(
      `[Lobsters discussion](${sites.lobsters.url}/s/shared/lobsters_story_shared) · [HN discussion](https://news.ycombinator.com/item?id=`,
    );
    const html = await runDigestCommand(sites.env, ["--source", "hn,lobsters", "--format", "html"]);
    expect(html.stdout).toContain("<h1>Hacker News and Lobsters digest</h1>");
    expect(markdown.stdout).toStartWith("# Lobsters and Hacker News digest\n");
    expect(html.stdout).toContain(">Lobsters discussion</a>");
    expect(html.stdout).toContain('<span class="tags">rust, performance</span>');
  });

  test("--only matches a Lobsters story's tags; DIGEST_SOURCES chooses the sites", async () => {
    using sites = twoSites();
    const run = await runDigestCommand({ ...sites.env, DIGEST_SOURCES: "lobsters" }, [
      "--only",
      "rust",
      "--format",
      "json",
    ]);
    expect(run.error).toBeUndefined();
    const doc = JSON.parse(run.stdout) as { stories: JsonStory[] };
    expect(doc.stories.map((story) => story.title)).toEqual(["Lobsters only"]);
    expect(sites.world.search.requests).toEqual([]);
  });

  test("a re-run asks the model nothing; the archive keeps Lobsters stories in its days, index and feed", async () => {
    using sites = twoSites();
    const archive = tempDir();
    const args = ["--source", "hn,lobsters", "--archive", archive];
    const first = await runDigestCommand(sites.env, args, { at: RUN_AT - 86_400_000 });
    expect(first.error).toBeUndefined();
    const calls = sites.world.ollama.generateCalls.length;
    const next = await runDigestCommand(sites.env, args);
    expect(next.error).toBeUndefined();
    expect(sites.world.ollama.generateCalls.length).toBe(calls);
    expect(next.logger.lines.filter((line) => line.startsWith("warn"))).toEqual([]);
    const index = JSON.parse(readFileSync(join(archive, "index.json"), "utf8"));
    expect(JSON.stringify(index)).toContain('"id":"lobsters-lobonly"');
    const feed = readFileSync(join(archive, "feed.xml"), "utf8");
    expect(feed).toContain(`<id>${sites.lobsters.url}/s/lobonly/lobsters_story_lobonly</id>`);
    expect(feed).toContain("Lobsters discussion (2 comments)");
    // The day before's page, written again from its JSON to link the new day, keeps both links.
    const before = readFileSync(join(archive, "2025-08-02.html"), "utf8");
    expect(before).toContain(">Lobsters discussion</a>");
    expect(before).toContain('href="2025-08-03.html"');
  });

  test("a site that cannot be read costs its stories, not the edition; both down stop the run", async () => {
    using sites = twoSites();
    using down = startFakeLobsters({
      stories: () => [],
      intercept: () => new Response("maintenance", { status: 404 }),
    });
    const env = { ...sites.env, LOBSTERS_URL: down.url };
    const run = await runDigestCommand(env, ["--source", "hn,lobsters", "--format", "json"]);
    expect(run.error).toBeUndefined();
    const doc = JSON.parse(run.stdout) as { stories: JsonStory[] };
    expect(doc.stories.map((story) => story.title)).toEqual(["A faster allocator", "HN only"]);
    expect(
      run.logger.lines.some((line) =>
        line.startsWith("warn Lobsters could not be read, its stories are left out: "),
      ),
    ).toBe(true);
    const alone = await runDigestCommand(env, ["--source", "lobsters"]);
    expect(alone.error).toBeInstanceOf(SearchApiError);
    // Named as Lobsters, not as the search API.
    expect(String(alone.error)).toStartWith(
      `SearchApiError: Lobsters request failed (HTTP 404; HTTP 404 is not retried): ${down.url}/hottest.json`,
    );
  });

  test("a Lobsters thread that comes back empty is noted as Lobsters', not the search API's", async () => {
    using sites = twoSites();
    using empty = startFakeLobsters({
      stories: (base) => [
        lobstersStory(base, { short_id: "quiet", title: "Quiet", comment_count: 2 }),
      ],
      comments: () => ({ quiet: [] }),
    });
    const env = { ...sites.env, LOBSTERS_URL: empty.url };
    const run = await runDigestCommand(env, ["--source", "lobsters", "--format", "json"]);
    expect(run.error).toBeUndefined();
    const doc = JSON.parse(run.stdout) as { stories: JsonStory[] };
    expect(doc.stories[0]?.notes).toContain(
      "No discussion summary: Lobsters returned no comments.",
    );
  });

  test("the mail's subject and the feed's title name the sites read", async () => {
    using sites = twoSites();
    const smtp = await startFakeSmtp({});
    try {
      const archive = tempDir();
      const run = await runDigestCommand(
        { ...sites.env, SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, DIGEST_EMAIL_FROM: "d@x.test" },
        ["--source", "hn,lobsters", "--archive", archive, "--email-to", "ada@example.com"],
      );
      expect(run.error).toBeUndefined();
      const [mail] = smtp.mails;
      if (!mail) throw new Error("no mail");
      const parsed = await simpleParser(mail.raw);
      expect(parsed.subject).toStartWith("Hacker News and Lobsters digest · ");
      const feed = parseFeed(readFileSync(join(archive, "feed.xml"), "utf8"));
      expect(feed.title).toBe("Hacker News and Lobsters digest");
    } finally {
      await smtp.stop();
    }
  });

  test("a bad --source is one line naming the flag", async () => {
    using sites = twoSites();
    const run = await runDigestCommand(sites.env, ["--source", "hn,reddit"]);
    expect(String(run.error)).toContain(
      '--source="hn,reddit" is invalid: "reddit": expected a comma-separated list of hn, lobsters',
    );
  });
});
