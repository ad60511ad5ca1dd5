import { describe, expect, test } from "bun:test";
import { parseFeed } from "@rowanmanning/feed-parser";
import { atomFeed, type FeedDay, type FeedStory, xml } from "../../../lib/digest/render/feed.ts";

function story(id: number, overrides: Partial<FeedStory> = {}): FeedStory {
  return {
    id,
    title: `Story ${id}`,
    url: `https://example.com/${id}`,
    site: "example.com",
    points: 100 + id,
    numComments: 10,
    articleWords: 920,
    articleSummary: `Article of ${id}.`,
    articleSource: "article",
    discussionSummary: `Discussion of ${id}.`,
    ...overrides,
  };
}

const monday: FeedDay = {
  key: "2026-11-23",
  generatedAt: "2026-11-23T07:00:00.000Z",
  model: "llama3.2",
  stories: [story(1), story(2)],
};
const tuesday: FeedDay = {
  key: "2026-11-24",
  generatedAt: "2026-11-24T07:00:00.000Z",
  model: "llama3.2",
  stories: [story(3), story(2, { points: 400, discussionSummary: "Tuesday's discussion of 2." })],
};
const ID = "urn:uuid:00000000-0000-5000-a000-000000000000";

/** The feed of Monday's edition holding only `one`. */
function feedOfOne(one: FeedDay["stories"][number]): string {
  return atomFeed([{ ...monday, stories: [one] }], { id: ID });
}

describe("atomFeed()", () => {
  test("is an Atom feed a real parser reads: title, self link, updated, one entry per story", () => {
    const feed = parseFeed(atomFeed([monday, tuesday], { id: ID }));
    expect(feed.meta.type).toBe("atom");
    expect(feed.title).toBe("Hacker News digest");
    expect(feed.updated?.toISOString()).toBe("2026-11-24T07:00:00.000Z");
    expect(feed.items.map((item) => item.id)).toEqual([
      "https://news.ycombinator.com/item?id=3",
      "https://news.ycombinator.com/item?id=2",
      "https://news.ycombinator.com/item?id=1",
    ]);
  });

  test("is titled by the sites its stories were read on", () => {
    const lobsters = story(9, {
      discussions: [
        {
          source: "lobsters",
          id: "abc123",
          url: "https://lobste.rs/s/abc123",
          points: 9,
          comments: 1,
        },
      ],
    });
    const both = parseFeed(atomFeed([monday, { ...tuesday, stories: [lobsters] }], { id: ID }));
    expect(both.title).toBe("Hacker News and Lobsters digest");
    expect(both.description).toStartWith("The Hacker News and Lobsters front pages, ");
    const alone = parseFeed(atomFeed([{ ...monday, stories: [lobsters] }], { id: ID }));
    expect(alone.title).toBe("Lobsters digest");
  });

  test("a story on two days is one entry with the newer day's summaries and time", () => {
    const feed = parseFeed(atomFeed([tuesday, monday], { id: ID }));
    const two = feed.items.find((item) => item.id === "https://news.ycombinator.com/item?id=2");
    expect(feed.items.filter((item) => item.id === two?.id)).toHaveLength(1);
    expect(two?.title).toBe("Story 2");
    expect(two?.url).toBe("https://example.com/2");
    expect(two?.published?.toISOString()).toBe("2026-11-23T07:00:00.000Z");
    expect(two?.updated?.toISOString()).toBe("2026-11-24T07:00:00.000Z");
    expect(two?.content).toContain("<p>Tuesday's discussion of 2.</p>");
    expect(two?.content).not.toContain("Discussion of 2.");
    expect(two?.content).toContain("400 points");
    expect(two?.content).toContain("there since Monday 23 November 2026");
    expect(two?.content).toContain(
      '<a href="https://news.ycombinator.com/item?id=2">HN discussion',
    );
    expect(two?.content).toContain('<a href="https://example.com/2">Read the article</a>');
    const one = feed.items.find((item) => item.id === "https://news.ycombinator.com/item?id=1");
    expect(one?.updated?.toISOString()).toBe("2026-11-23T07:00:00.000Z");
  });

  test("the same days give the same ids: entries stay stable from run to run", () => {
    const ids = (days: FeedDay[]) => parseFeed(atomFeed(days, { id: ID })).items.map((i) => i.id);
    expect(ids([monday])).toEqual([
      "https://news.ycombinator.com/item?id=1",
      "https://news.ycombinator.com/item?id=2",
    ]);
    expect(ids([monday, tuesday])).toContain("https://news.ycombinator.com/item?id=1");
  });

  test("a text post links to its discussion; both summaries are the content", () => {
    const text = feedOfOne(
      story(9, {
        title: "Ask HN: Tabs?",
        url: null,
        site: null,
        articleSource: "post",
        discussionSummary: null,
      }),
    );
    const [item] = parseFeed(text).items;
    expect(item?.url).toBe("https://news.ycombinator.com/item?id=9");
    expect(item?.content).toContain("<h3>Post</h3>\n<p>Article of 9.</p>");
    expect(item?.content).toContain("<h3>Discussion</h3>\n<p><em>No summary.</em></p>");
    expect(text).not.toContain('rel="related"');
  });

  test("hostile titles and summaries stay text: escaped, no control characters, still parses", () => {
    const text = feedOfOne(
      story(5, {
        title: 'A <b>bold</b> & "quoted" ]]> title\u0007\u001b[31m',
        url: "javascript:alert(1)",
        articleSummary: "<script>alert(1)</script> \ud800 \uffff & more",
      }),
    );
    // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for them is the point.
    expect(text).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\uffff]/);
    expect(text).not.toContain("<script");
    expect(text).not.toContain("javascript:");
    const [item] = parseFeed(text).items;
    expect(item?.title).toBe('A <b>bold</b> & "quoted" ]]> title');
    expect(item?.content).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(item?.url).toBe("https://news.ycombinator.com/item?id=5");
  });

  test("xml() escapes markup and drops what XML 1.0 cannot carry", () => {
    expect(xml('<a href="x">&</a>')).toBe("&#60;a href=&#34;x&#34;&#62;&#38;&#60;/a&#62;");
    expect(xml("a\u0000b\ud800c\uffffd")).toBe("ab\ufffdcd");
  });
});
