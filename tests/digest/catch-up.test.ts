import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { JsonStory } from "../../lib/digest/render/json.ts";
import { articleHtml, articleParagraphs } from "../fakes/article-site.ts";
import { RUN_AT, runDigestCommand } from "../fakes/digest-run.ts";
import { startDigestWorld } from "../fakes/digest-world.ts";
import { storyHit } from "../fakes/hn-search.ts";
import { tempDirs } from "../fakes/temp-dirs.ts";

setDefaultTimeout(30_000);

const tempDir = tempDirs("digest-catch-up-");

const BODY = articleParagraphs();
const NOW = Math.floor(RUN_AT / 1000);
const DAY = 86_400;

/** Stories of the last ten days, some over 100 points, some not. */
function week() {
  const story = (title: string, daysAgo: number, points: number) =>
    storyHit({
      title,
      url: `/${title.toLowerCase().replace(/\W+/g, "-")}`,
      points,
      num_comments: 0,
      created_at_i: NOW - Math.round(daysAgo * DAY),
      created_at: new Date((NOW - Math.round(daysAgo * DAY)) * 1000).toISOString(),
    });
  const stories = [
    story("Seen yesterday", 1, 900),
    story("Monday's best", 5, 700),
    story("Tuesday's news", 4, 300),
    story("Too quiet", 2, 40),
    story("Last month", 10, 2000),
    story("Sunday's best", 6.5, 450),
  ];
  const pages = Object.fromEntries(
    stories.map((hit) => [hit.url as string, { body: articleHtml(hit.title as string, BODY) }]),
  );
  return startDigestWorld({ stories, pages });
}

describe("a catch-up edition", () => {
  test("--days 7: the week's best from search_by_date, less what the archive summarised, kept as its own page and feed entry", async () => {
    using world = week();
    const archive = tempDir();
    const env = { ...world.env, XDG_CACHE_HOME: tempDir() };
    // Yesterday's daily run archived the first story of the front page.
    const daily = await runDigestCommand(env, ["--limit", "1", "--archive", archive], {
      at: RUN_AT - DAY * 1000,
    });
    expect(daily.error).toBeUndefined();
    world.search.requests.length = 0;

    const run = await runDigestCommand(env, [
      "--days",
      "7",
      "--archive",
      archive,
      "--format",
      "json",
    ]);
    expect(run.error).toBeUndefined();
    const [request] = world.search.requests;
    const url = new URL(`http://x${request}`);
    expect(url.pathname).toBe("/api/v1/search_by_date");
    expect(url.searchParams.get("tags")).toBe("story");
    expect(url.searchParams.get("numericFilters")).toBe(
      `created_at_i>${NOW - 7 * DAY},created_at_i<${NOW + 1},points>=100`,
    );
    const doc = JSON.parse(run.stdout) as {
      catchUp: unknown;
      stories: JsonStory[];
    };
    // Most points first; "Seen yesterday" is in the archive, "Too quiet" under 100 points,
    // "Last month" outside the week.
    expect(doc.stories.map((story) => story.title)).toEqual([
      "Monday's best",
      "Sunday's best",
      "Tuesday's news",
    ]);
    expect(doc.catchUp).toEqual({
      from: new Date(RUN_AT - 7 * DAY * 1000).toISOString(),
      hours: 168,
      skipped: 1,
    });
    expect(run.logger.lines).toContain(
      "info Catch-up since 2025-07-27 18:54 UTC: 3 stories over 100 points, 1 left out as the archive summarised them already",
    );

    const files = readdirSync(archive).sort();
    expect(files).toContain("catch-up-2025-08-03.html");
    expect(files).toContain("catch-up-2025-08-03.json");
    expect(files).not.toContain("2025-08-03.html");
    const page = readFileSync(join(archive, "catch-up-2025-08-03.html"), "utf8");
    expect(page).toContain("<h1>Hacker News digest: the best of the last 7 days</h1>");
    const feed = readFileSync(join(archive, "feed.xml"), "utf8");
    expect(feed).toContain("<title>Catch-up: the best of 7 days, 3 stories</title>");
    expect(feed).toContain(
      '<link rel="alternate" type="text/html" href="catch-up-2025-08-03.html"/>',
    );
    // Yesterday's story is still the feed's, from its day.
    expect(feed).toContain("<title>Seen yesterday</title>");

    // A second catch-up the same day replaces the first: its stories are not skipped, and the
    // daily run's still are.
    const again = await runDigestCommand(env, [
      "--since",
      "7d",
      "--archive",
      archive,
      "--format",
      "json",
    ]);
    expect(again.error).toBeUndefined();
    const titles = (JSON.parse(again.stdout) as { stories: JsonStory[] }).stories.map(
      (story) => story.title,
    );
    expect(titles).toEqual(["Monday's best", "Sunday's best", "Tuesday's news"]);
  });

  test("--since and --days together are refused", async () => {
    const run = await runDigestCommand({ HOME: "/nonexistent" }, ["--since", "7d", "--days", "7"]);
    expect(String(run.error)).toContain("--since and --days say the same thing: give one of them");
  });

  test("--since takes hours to a month", async () => {
    const run = await runDigestCommand({ HOME: "/nonexistent" }, ["--since", "90d"]);
    expect(String(run.error)).toContain(
      "expected a duration such as 7d, 36h or 2w (at least 1h, at most 31d)",
    );
  });
});
