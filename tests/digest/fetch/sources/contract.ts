/**
 * What every story source promises, whatever its site: one suite, run against each source's fake
 * (contract.test.ts). A new source in lib/digest/fetch/ adds its harness there.
 */
import { describe, expect, test } from "bun:test";
import { SearchApiError } from "../../../../lib/digest/fetch/search-fetch.ts";
import type { StorySource } from "../../../../lib/digest/fetch/source.ts";
import { buildThread, countComments } from "../../../../lib/digest/fetch/thread.ts";
import type { SourceName, Story } from "../../../../lib/digest/types.ts";
import { createMemoryLogger } from "../../../../lib/log.ts";

/** One comment of a world's story; `parent` names another comment's key (null: top level). */
export interface WorldComment {
  key: string;
  parent: string | null;
  author: string;
  /** The comment as the site sends it: HTML. */
  html: string;
  deleted?: boolean;
}

export interface WorldStory {
  title: string;
  url: string | null;
  points: number;
  /** Posted at (unix s). */
  createdAt: number;
  author: string;
  comments: WorldComment[];
}

/** A site as the suite describes it; each harness serves it in its own site's shapes. */
export interface World {
  /** The front page, in the site's order. */
  stories: WorldStory[];
  /** Entries the site sends that are no story (a malformed one), at this place on the front page. */
  malformedAt?: number;
}

export interface RunningSource {
  source: StorySource;
  /** Requests the fake received, as paths. */
  requests: string[];
  userAgents: (string | null)[];
  [Symbol.dispose](): void;
}

export interface SourceHarness {
  name: SourceName;
  start(world: World): RunningSource;
  /** A fake that answers every request with this status. */
  failing(status: number): RunningSource;
}

const noWait = { sleep: async () => {}, userAgent: "hn-digest-test" };

const NOW = 1_754_247_281;
const HOUR = 3600;

/** A front page with a real conversation under its first story and a malformed entry. */
export function sampleWorld(): World {
  return {
    stories: [
      {
        title: "A faster allocator",
        url: "https://example.com/malloc",
        points: 120,
        createdAt: NOW - 3 * HOUR,
        author: "ada",
        comments: [
          {
            key: "a",
            parent: null,
            author: "bob",
            html: "<p>It&#x27;s faster, but &quot;why&quot;?",
          },
          { key: "b", parent: "a", author: "cyd", html: "Per-thread caches.<p>See the paper." },
          { key: "c", parent: "b", author: "bob", html: "Thanks &amp; agreed." },
          { key: "d", parent: null, author: "dee", html: "", deleted: true },
          { key: "e", parent: null, author: "eve", html: "Benchmarks <i>please</i>." },
        ],
      },
      {
        title: "Ask: tabs or spaces?",
        url: null,
        points: 45,
        createdAt: NOW - 30 * HOUR,
        author: "fay",
        comments: [],
      },
      {
        title: "Old news",
        url: "https://example.org/old",
        points: 300,
        createdAt: NOW - 9 * 24 * HOUR,
        author: "gus",
        comments: [],
      },
    ],
    malformedAt: 1,
  };
}

export function sourceContract(harness: SourceHarness): void {
  describe(`${harness.name} source contract`, () => {
    test("frontPage() gives the site's stories in its order, each with its discussion", async () => {
      using site = harness.start(sampleWorld());
      const logger = createMemoryLogger();
      // Four entries asked for: three stories and the malformed one, left out and counted.
      const page = await site.source.frontPage(4, { ...noWait, logger });
      expect(page.stories.map((story) => story.title)).toEqual([
        "A faster allocator",
        "Ask: tabs or spaces?",
        "Old news",
      ]);
      expect(page.malformed).toBe(1);
      const [first, ask] = page.stories as [Story, Story];
      expect(first).toMatchObject({
        source: harness.name,
        url: "https://example.com/malloc",
        site: "example.com",
        points: 120,
        numComments: 5,
        author: "ada",
        type: "article",
        createdAt: NOW - 3 * HOUR,
      });
      expect(ask).toMatchObject({ url: null, site: null, points: 45 });
      const [discussion] = first.discussions ?? [];
      expect(discussion).toMatchObject({ source: harness.name, points: 120, comments: 5 });
      // The page the site names (Lobsters adds the title's slug), under the story's own address.
      expect(discussion?.url.startsWith(site.source.storyUrl(discussion?.id ?? ""))).toBe(true);
      // Every story has a key of its own across sources: HN's bare id, another's prefixed.
      const keys = page.stories.map((story) => String(story.id));
      expect(new Set(keys).size).toBe(3);
      expect(site.userAgents.every((agent) => agent === "hn-digest-test")).toBe(true);
    });

    test("frontPage() stops at the limit", async () => {
      using site = harness.start({ stories: sampleWorld().stories });
      const page = await site.source.frontPage(2, noWait);
      expect(page.stories).toHaveLength(2);
    });

    test("comments() gives the comment tree: parents kept, text plain, each with its permalink", async () => {
      using site = harness.start(sampleWorld());
      const [story] = (await site.source.frontPage(1, noWait)).stories;
      const discussion = story?.discussions?.[0];
      if (!story || !discussion) throw new Error("no story");
      const comments = await site.source.comments(discussion, { ...noWait, max: 100 });
      const thread = buildThread(comments, discussion.id);
      // The deleted comment is dropped; the others form two top-level subthreads.
      expect(countComments(thread)).toBe(4);
      const byAuthor = (author: string) => thread.find((node) => node.comment.author === author);
      const bob = byAuthor("bob");
      expect(bob?.answers).toBe("story");
      expect(bob?.comment.text).toBe('It\'s faster, but "why"?');
      expect(bob?.replies[0]?.comment.text).toBe("Per-thread caches.\n\nSee the paper.");
      expect(bob?.replies[0]?.replies[0]?.comment.text).toBe("Thanks & agreed.");
      expect(byAuthor("eve")?.comment.text).toBe("Benchmarks please.");
      const urls = comments.filter((comment) => comment.text !== "").map((comment) => comment.url);
      expect(urls.every((url) => url !== undefined && /^https?:\/\//.test(url))).toBe(true);
      expect(new Set(urls).size).toBe(urls.length);
    });

    test("since() gives the stories posted within the window over the points floor, most points first", async () => {
      using site = harness.start(sampleWorld());
      const week = { from: NOW - 7 * 24 * HOUR, to: NOW + 60, minPoints: 40 };
      const page = await site.source.since(week, 10, noWait);
      expect(page.stories.map((story) => story.title)).toEqual([
        "A faster allocator",
        "Ask: tabs or spaces?",
      ]);
      const strict = await site.source.since({ ...week, minPoints: 100 }, 10, noWait);
      expect(strict.stories.map((story) => story.title)).toEqual(["A faster allocator"]);
    });

    test("a site that fails throws SearchApiError", async () => {
      using site = harness.failing(404);
      await expect(site.source.frontPage(3, noWait)).rejects.toBeInstanceOf(SearchApiError);
    });
  });
}
