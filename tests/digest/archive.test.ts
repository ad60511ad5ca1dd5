import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { EventEmitter } from "node:events";
import { readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseFeed } from "@rowanmanning/feed-parser";
import { runCommand } from "citty";
import { UsageError } from "../../lib/config/errors.ts";
import { createDigestCommand } from "../../lib/digest/command.ts";
import { DigestFailedError } from "../../lib/digest/digest.ts";
import { createMemoryLogger } from "../../lib/log.ts";
import { startDigestWorld } from "../fakes/digest-world.ts";
import { storyHit } from "../fakes/hn-search.ts";
import { tempDirs } from "../fakes/temp-dirs.ts";

setDefaultTimeout(30_000);

const tempDir = tempDirs("digest-archive-");

/** A text post (no article to fetch, no comments), summarised by the fake Ollama from its title. */
function post(id: number, title: string, points = 100) {
  return storyHit({
    objectID: String(id),
    story_id: id,
    _tags: ["story", "author_pg", `story_${id}`, "front_page"],
    title,
    url: undefined,
    story_text: `The post ${title} says something worth reading.`,
    num_comments: 0,
    points,
    created_at_i: Date.parse("2026-11-22T07:00:00Z") / 1000,
  });
}

/** One `bun run digest --archive DIR` at `at`, against a front page of `stories`. */
async function runDay(
  at: string,
  stories: unknown[],
  options: {
    archive: string;
    cache: string;
    timeZone?: string;
    env?: Record<string, string>;
    flags?: string[];
  },
) {
  using world = startDigestWorld({ stories });
  const logger = createMemoryLogger();
  let error: unknown;
  try {
    await runCommand(
      createDigestCommand({
        env: { ...world.env, XDG_CACHE_HOME: options.cache, ...options.env },
        stdout: { write: () => {} },
        stderr: { isTTY: false, write: () => {} },
        logger,
        sleep: async () => {},
        now: () => Date.parse(at),
        timeZone: options.timeZone ?? "UTC",
        signals: { source: new EventEmitter() },
      }),
      { rawArgs: ["--archive", options.archive, ...(options.flags ?? [])] },
    );
  } catch (caught) {
    error = caught;
  }
  return { error, logger, searchRequests: world.search.requests.length };
}

const read = (dir: string, name: string) => readFileSync(join(dir, name), "utf8");

describe("bun run digest --archive", () => {
  test("two days: a page and JSON each, the index newest first, one feed entry per story", async () => {
    const archive = tempDir();
    const cache = tempDir();
    const monday = await runDay("2026-11-23T07:00:00Z", [post(1001, "Alpha"), post(1002, "Beta")], {
      archive,
      cache,
    });
    expect(monday.error).toBeUndefined();
    const tuesday = await runDay(
      "2026-11-24T07:00:00Z",
      [post(1003, "Gamma"), post(1002, "Beta, revised", 300)],
      { archive, cache },
    );
    expect(tuesday.error).toBeUndefined();
    expect(tuesday.logger.lines).toContain(
      `info Archived as ${join(archive, "2026-11-24.html")}, with index.html and feed.xml`,
    );

    // Every file in place, and no temporary file left behind.
    expect(readdirSync(archive).sort()).toEqual([
      "2026-11-23.html",
      "2026-11-23.json",
      "2026-11-24.html",
      "2026-11-24.json",
      "feed.xml",
      "index.html",
      "index.json",
    ]);

    const index = read(archive, "index.html");
    expect(index.indexOf('href="2026-11-24.html"')).toBeGreaterThan(-1);
    expect(index.indexOf('href="2026-11-24.html"')).toBeLessThan(
      index.indexOf('href="2026-11-23.html"'),
    );
    expect(index).toContain(">Tuesday 24 November 2026</a>");
    expect(index).toContain('<a href="feed.xml">Atom feed</a>');
    // Each day with its count and the headlines it brought, each linked to its story on the
    // day's page: Beta, on both days' front pages, is listed once, under Monday.
    expect(index).toContain(
      '<li><a href="2026-11-24.html">Tuesday 24 November 2026</a> <span class="facts">· 2 stories · <a href="2026-11-24.json">JSON</a></span>\n<ol class="headlines">\n<li><a href="2026-11-24.html#story-1003">Gamma</a></li>\n</ol></li>',
    );
    expect(index).toContain('<a href="2026-11-23.html#story-1001">Alpha</a>');
    expect(index.match(/#story-1002"/g)).toEqual(['#story-1002"']);

    // Monday's page, written before Tuesday was, now leads to it.
    expect(read(archive, "2026-11-23.html")).toContain(
      '<nav><a href="index.html">All days</a> · <a href="feed.xml">Atom feed</a> · <a href="2026-11-24.html" rel="next">Tuesday 24 November 2026 →</a></nav>',
    );
    // And keeps what it said: its stories and its time.
    expect(read(archive, "2026-11-23.html")).toContain(
      "<title>Hacker News digest · Monday 23 November 2026, 07:00 UTC</title>",
    );
    expect(read(archive, "2026-11-23.html")).toContain("Summary of the article of Alpha.");

    const day = read(archive, "2026-11-24.html");
    expect(day).toContain(
      "<title>Hacker News digest · Tuesday 24 November 2026, 07:00 UTC</title>",
    );
    expect(day).toContain(
      '<nav><a href="2026-11-23.html" rel="prev">← Monday 23 November 2026</a> · <a href="index.html">All days</a> · <a href="feed.xml">Atom feed</a></nav>',
    );
    // Gamma is new since Monday and comes first; Beta was there on Monday.
    expect(day.indexOf('id="story-1003"')).toBeLessThan(day.indexOf('id="story-1002"'));
    expect(day).toContain("<h2>New since the last run</h2>");
    for (const page of [day, index]) {
      expect(page).not.toMatch(/<script|<img|<iframe|src=|@import|url\(/i);
    }
    const json = JSON.parse(read(archive, "2026-11-24.json"));
    expect(json.stories.map((s: { id: number }) => s.id)).toEqual([1003, 1002]);
    expect(json.generatedAt).toBe("2026-11-24T07:00:00.000Z");

    const feed = parseFeed(read(archive, "feed.xml"));
    expect(feed.items.map((item) => [item.id, item.title])).toEqual([
      ["https://news.ycombinator.com/item?id=1003", "Gamma"],
      ["https://news.ycombinator.com/item?id=1002", "Beta, revised"],
      ["https://news.ycombinator.com/item?id=1001", "Alpha"],
    ]);
    const beta = feed.items[1];
    expect(beta?.updated?.toISOString()).toBe("2026-11-24T07:00:00.000Z");
    expect(beta?.published?.toISOString()).toBe("2026-11-23T07:00:00.000Z");
    expect(beta?.content).toContain("Summary of the article of Beta, revised.");
    expect(beta?.content).toContain("300 points");
    expect(beta?.url).toBe("https://news.ycombinator.com/item?id=1002");
    expect(feed.items[2]?.updated?.toISOString()).toBe("2026-11-23T07:00:00.000Z");
  });

  test("a second run the same day merges into that day's page, JSON and feed; one entry per story", async () => {
    const archive = tempDir();
    const cache = tempDir();
    await runDay(
      "2026-11-24T07:00:00Z",
      [post(2001, "Morning story"), post(2003, "Gone by evening")],
      {
        archive,
        cache,
      },
    );
    // What a run killed while it replaced feed.xml two hours ago left: the next run removes it.
    const leftover = join(archive, ".feed.xml.0123456789ab.tmp");
    writeFileSync(leftover, "<feed");
    const twoHoursAgo = (Date.now() - 2 * 3_600_000) / 1000;
    utimesSync(leftover, twoHoursAgo, twoHoursAgo);
    const feedId = (xml: string) => /<feed[^>]*>\s*<id>([^<]+)<\/id>/.exec(xml)?.[1];
    const idBefore = feedId(read(archive, "feed.xml"));
    const evening = await runDay(
      "2026-11-24T19:30:00Z",
      [post(2002, "Evening story"), post(2001, "Morning story")],
      { archive, cache },
    );
    expect(evening.error).toBeUndefined();
    expect(readdirSync(archive).sort()).toEqual([
      "2026-11-24.html",
      "2026-11-24.json",
      "feed.xml",
      "index.html",
      "index.json",
    ]);
    const page = read(archive, "2026-11-24.html");
    expect(page).toContain("Tuesday 24 November 2026, 19:30 UTC");
    // The evening's front page first, then what only the morning showed.
    expect(page.indexOf('id="story-2002"')).toBeLessThan(page.indexOf('id="story-2001"'));
    expect(page.indexOf('<h2 id="earlier">Earlier today</h2>')).toBeLessThan(
      page.indexOf('id="story-2003"'),
    );
    expect(page.indexOf('id="story-2001"')).toBeLessThan(page.indexOf('<h2 id="earlier">'));
    expect(page).toContain("Summary of the article of Gone by evening.");
    const json = JSON.parse(read(archive, "2026-11-24.json"));
    expect(
      json.stories.map((story: { id: number; earlierToday?: boolean }) => [
        story.id,
        story.earlierToday,
      ]),
    ).toEqual([
      [2002, undefined],
      [2001, undefined],
      [2003, true],
    ]);
    expect(read(archive, "index.html")).toContain("· 3 stories ·");
    // The day's first page: no earlier day to link to (the morning run is the same day).
    expect(read(archive, "2026-11-24.html")).not.toContain('rel="prev"');
    const feed = parseFeed(read(archive, "feed.xml"));
    expect(feedId(read(archive, "feed.xml"))).toBe(idBefore ?? "");
    expect(idBefore).toMatch(/^urn:uuid:[0-9a-f-]{36}$/);
    expect(feed.items.map((item) => item.id)).toEqual([
      "https://news.ycombinator.com/item?id=2002",
      "https://news.ycombinator.com/item?id=2001",
      "https://news.ycombinator.com/item?id=2003",
    ]);
    expect(feed.items[1]?.updated?.toISOString()).toBe("2026-11-24T19:30:00.000Z");
  });

  test("a second run an hour later keeps the day's New marks and its count of new stories", async () => {
    const archive = tempDir();
    const cache = tempDir();
    await runDay("2026-11-23T07:00:00Z", [post(3001, "Monday's story")], { archive, cache });
    await runDay(
      "2026-11-24T07:00:00Z",
      [post(3002, "Tuesday's first"), post(3001, "Monday's story")],
      { archive, cache },
    );
    const again = await runDay(
      "2026-11-24T08:00:00Z",
      [post(3003, "Tuesday's second"), post(3002, "Tuesday's first"), post(3001, "Monday's story")],
      { archive, cache },
    );
    expect(again.error).toBeUndefined();
    const json = JSON.parse(read(archive, "2026-11-24.json"));
    expect(
      json.stories.map((story: { id: number; isNew: boolean }) => [story.id, story.isNew]),
    ).toEqual([
      [3003, true],
      // New this morning, seen by the run an hour ago: still New on the day's page.
      [3002, true],
      [3001, false],
    ]);
    expect(json.newSinceLastRun).toBe(2);
    expect(json.lastRunAt).toBe("2026-11-23T07:00:00.000Z");
    const page = read(archive, "2026-11-24.html");
    const fresh = /<section aria-labelledby="new">[\s\S]*?<\/section>/.exec(page)?.[0] ?? "";
    expect(fresh).toContain('<article id="story-3002">');
    expect(fresh).toContain('<article id="story-3003">');
    expect(page.match(/<strong class="new">New<\/strong>/g)).toHaveLength(2);
  });

  test("an id beyond 2^53 is kept exactly: in the JSON, the pages, the feed and the last run", async () => {
    const archive = tempDir();
    const cache = tempDir();
    const big = "9007199254740993";
    const bigPost = (points: number) => ({
      ...post(1, "Huge id", points),
      objectID: big,
      story_id: undefined,
    });
    await runDay("2026-11-23T07:00:00Z", [bigPost(10), post(6001, "Small id")], { archive, cache });
    const tuesday = await runDay("2026-11-24T07:00:00Z", [bigPost(50)], { archive, cache });
    expect(tuesday.error).toBeUndefined();
    const json = read(archive, "2026-11-24.json");
    expect(json).toContain(`"id": "${big}"`);
    const [story] = JSON.parse(json).stories;
    // Seen on Monday under the same id: not new, and its points moved by exactly 40.
    expect([story.id, story.isNew, story.pointsSinceLastRun]).toEqual([big, false, 40]);
    expect(read(archive, "2026-11-24.html")).toContain(`<article id="story-${big}">`);
    // Listed once, under the day it came.
    expect(read(archive, "index.html")).toContain(
      `<a href="2026-11-23.html#story-${big}">Huge id</a>`,
    );
    // Both days in the feed (one id over 2^53 once dropped a whole day), the story once.
    const feed = parseFeed(read(archive, "feed.xml"));
    expect(feed.items.map((item) => item.id)).toEqual([
      `https://news.ycombinator.com/item?id=${big}`,
      "https://news.ycombinator.com/item?id=6001",
    ]);
    expect(tuesday.logger.lines.filter((line) => line.startsWith("warn"))).toEqual([]);
  });

  test("a broken index.json is rebuilt from the days' JSON, with one warning", async () => {
    const archive = tempDir();
    const cache = tempDir();
    await runDay("2026-11-23T07:00:00Z", [post(7001, "Monday headline")], { archive, cache });
    writeFileSync(join(archive, "index.json"), '{"days": {"2026-11-23": {"stories": "many"}}}');
    const tuesday = await runDay("2026-11-24T07:00:00Z", [post(7002, "Tuesday headline")], {
      archive,
      cache,
    });
    expect(tuesday.error).toBeUndefined();
    expect(tuesday.logger.lines.filter((line) => line.startsWith("warn"))).toHaveLength(1);
    expect(tuesday.logger.lines.find((line) => line.startsWith("warn"))).toStartWith(
      "warn Archive: index.json is rebuilt from the days' JSON: ",
    );
    const index = read(archive, "index.html");
    expect(index).toContain('<a href="2026-11-23.html#story-7001">Monday headline</a>');
    expect(index).toContain('<a href="2026-11-24.html#story-7002">Tuesday headline</a>');
    expect(Object.keys(JSON.parse(read(archive, "index.json")).days)).toEqual([
      "2026-11-24",
      "2026-11-23",
    ]);
  });

  test("the day is the local one, and the feed covers the last 7 days only", async () => {
    const archive = tempDir();
    const cache = tempDir();
    // 23:30 UTC on the 13th is already the 14th in Paris.
    await runDay("2026-11-13T23:30:00Z", [post(3001, "Old story")], {
      archive,
      cache,
      timeZone: "Europe/Paris",
    });
    expect(readdirSync(archive)).toContain("2026-11-14.html");
    await runDay("2026-11-21T08:00:00Z", [post(3002, "Recent story")], {
      archive,
      cache,
      timeZone: "Europe/Paris",
    });
    expect(read(archive, "2026-11-21.html")).toContain("Saturday 21 November 2026, 09:00 CET");
    const index = read(archive, "index.html");
    expect(index).toContain('href="2026-11-14.html"');
    const feed = parseFeed(read(archive, "feed.xml"));
    expect(feed.items.map((item) => item.title)).toEqual(["Recent story"]);
  });

  test("a folder that cannot be made is a UsageError (exit 2) before any request", async () => {
    const parent = tempDir();
    const file = join(parent, "a-file");
    writeFileSync(file, "not a folder");
    const bad = await runDay("2026-11-24T07:00:00Z", [post(4001, "Never fetched")], {
      archive: join(file, "archive"),
      cache: tempDir(),
      flags: ["--out", join(parent, "digest.md")],
    });
    // Nothing of --out either: not even its temporary file.
    expect(readdirSync(parent)).toEqual(["a-file"]);
    expect(bad.error).toBeInstanceOf(UsageError);
    expect((bad.error as Error).message).toStartWith(
      `Archive folder ${join(file, "archive")} (--archive / DIGEST_ARCHIVE) cannot be written: `,
    );
    expect(bad.searchRequests).toBe(0);
  });

  test("a run whose every summary failed leaves the archive (here DIGEST_ARCHIVE) as it was", async () => {
    const archive = tempDir();
    const cache = tempDir();
    await runDay("2026-11-24T07:00:00Z", [post(5001, "Good day")], { archive, cache });
    const before = read(archive, "2026-11-24.html");
    using world = startDigestWorld({
      stories: [post(5002, "Bad run")],
      ollama: { generate: () => Response.json({ error: "model crashed" }, { status: 500 }) },
    });
    let error: unknown;
    try {
      await runCommand(
        createDigestCommand({
          env: { ...world.env, XDG_CACHE_HOME: cache, DIGEST_ARCHIVE: archive },
          stdout: { write: () => {} },
          stderr: { isTTY: false, write: () => {} },
          logger: createMemoryLogger(),
          sleep: async () => {},
          now: () => Date.parse("2026-11-24T09:00:00Z"),
          timeZone: "UTC",
          signals: { source: new EventEmitter() },
        }),
        { rawArgs: [] },
      );
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(DigestFailedError);
    expect(read(archive, "2026-11-24.html")).toBe(before);
  });
});
