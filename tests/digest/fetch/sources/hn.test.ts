import { describe, expect, test } from "bun:test";
import { itemId, parseJsonExactly } from "../../../../lib/digest/fetch/exact-ids.ts";
import {
  commentsUrl,
  fetchComments,
  fetchFrontPage,
  frontPageUrl,
  hnItemUrl,
} from "../../../../lib/digest/fetch/hn/client.ts";
import { SearchApiError } from "../../../../lib/digest/fetch/search-fetch.ts";
import { buildThread } from "../../../../lib/digest/fetch/thread.ts";
import { createMemoryLogger } from "../../../../lib/log.ts";
import { commentHit, startFakeHnSearch, storyHit } from "../../../fakes/hn-search.ts";

const noWait = { sleep: async () => {} };

describe("request URLs", () => {
  test("frontPageUrl() asks for the front page with the limit", () => {
    expect(frontPageUrl("https://hn.algolia.com/api/v1", 10)).toBe(
      "https://hn.algolia.com/api/v1/search?tags=front_page&hitsPerPage=10",
    );
  });

  test("commentsUrl() asks for one story's comments", () => {
    expect(commentsUrl("https://hn.algolia.com/api/v1", 123, 50)).toBe(
      "https://hn.algolia.com/api/v1/search?tags=comment,story_123&hitsPerPage=50",
    );
  });

  test("hnItemUrl() links the discussion on news.ycombinator.com", () => {
    expect(hnItemUrl(42)).toBe("https://news.ycombinator.com/item?id=42");
  });
});

describe("fetchFrontPage()", () => {
  test("returns the stories in the API's order with the limit sent", async () => {
    const hits = [
      storyHit({ title: "B", points: 5, url: "https://example.com/b" }),
      storyHit({ title: "A", points: 500 }),
    ];
    using search = startFakeHnSearch({ stories: hits });
    const { stories } = await fetchFrontPage(search.url, 2, noWait);
    expect(stories.map((story) => story.title)).toEqual(["B", "A"]);
    const id = Number(hits[0]?.objectID);
    expect(stories[0]).toEqual({
      id,
      source: "hn",
      discussions: [{ source: "hn", id, url: hnItemUrl(id), points: 5, comments: 2 }],
      title: "B",
      url: "https://example.com/b",
      storyText: null,
      author: "pg",
      points: 5,
      numComments: 2,
      type: "article",
      site: "example.com",
      createdAt: 1754247281,
    });
    expect(search.requests).toEqual(["/api/v1/search?tags=front_page&hitsPerPage=2"]);
  });

  test("leaves a malformed hit out with a warning and keeps the rest", async () => {
    const good = storyHit({ title: "Good", url: "https://example.com/good" });
    using search = startFakeHnSearch({
      stories: [{ objectID: "abc", title: 5 }, good, storyHit({ title: undefined }), "nonsense"],
    });
    const logger = createMemoryLogger();
    const page = await fetchFrontPage(search.url, 10, { ...noWait, logger });
    expect(page.stories.map((story) => story.title)).toEqual(["Good"]);
    expect(page.malformed).toBe(3);
    expect(logger.lines).toHaveLength(3);
    expect(logger.lines[0]).toStartWith(
      "warn Front-page hit #1 (objectID abc) is malformed and left out: objectID:",
    );
    expect(logger.lines[1]).toStartWith("warn Front-page hit #3 (objectID");
  });

  test("accepts absent and null fields (responses from before 2023)", async () => {
    using search = startFakeHnSearch({
      stories: [
        storyHit({ title: "Ask HN: absent", url: undefined, points: undefined }),
        storyHit({
          title: "Ask HN: null",
          url: null,
          story_text: null,
          num_comments: null,
          author: null,
        }),
      ],
    });
    const { stories } = await fetchFrontPage(search.url, 10, noWait);
    expect(stories).toHaveLength(2);
    expect(stories[0]).toMatchObject({ url: null, points: 0 });
    expect(stories[1]).toMatchObject({ url: null, storyText: null, numComments: 0, author: null });
  });

  test("asks for exactly --limit hits; a malformed one makes the front page one story shorter", async () => {
    const good = Array.from({ length: 12 }, (_, i) => storyHit({ title: `S${i}` }));
    using search = startFakeHnSearch({
      stories: [good[0], { objectID: "x" }, ...good.slice(1)],
    });
    const logger = { warn: () => {} };
    const page = await fetchFrontPage(search.url, 10, { ...noWait, logger });
    expect(page.stories.map((story) => story.title)).toEqual(
      good.slice(0, 9).map((hit) => String(hit.title)),
    );
    expect(page.malformed).toBe(1);
    expect(search.requests).toEqual(["/api/v1/search?tags=front_page&hitsPerPage=10"]);
  });

  test("tells the story's type, site and age", async () => {
    using search = startFakeHnSearch({
      stories: [
        storyHit({ title: "Show HN: X", url: "https://www.x.dev/", _tags: ["story", "show_hn"] }),
        storyHit({ title: "Ask HN: Y?", url: undefined, _tags: ["story", "ask_hn"] }),
        storyHit({
          title: "Acme (YC W25) is hiring",
          url: "https://acme.com/jobs",
          _tags: ["job"],
        }),
        storyHit({ title: "Tell HN: Z", url: undefined, _tags: ["story"] }),
        storyHit({ title: "A paper", url: "https://arxiv.org/abs/1", created_at_i: 1754000000 }),
      ],
    });
    const { stories } = await fetchFrontPage(search.url, 5, noWait);
    expect(stories.map((s) => [s.type, s.site])).toEqual([
      ["show", "x.dev"],
      ["ask", null],
      ["job", "acme.com"],
      ["text", null],
      ["article", "arxiv.org"],
    ]);
    expect(stories[4]?.createdAt).toBe(1754000000);
  });

  test("turns an Ask HN story_text into plain text", async () => {
    using search = startFakeHnSearch({
      stories: [storyHit({ url: undefined, story_text: "What&#x27;s your setup?<p>Mine is vim." })],
    });
    const [story] = (await fetchFrontPage(search.url, 10, noWait)).stories;
    expect(story?.storyText).toBe("What's your setup?\n\nMine is vim.");
  });

  test("strips control characters from titles", async () => {
    using search = startFakeHnSearch({
      stories: [storyHit({ title: "Evil\u001b]0;pwned\u0007 \u001b[31mred\u001b[0m title\r\n" })],
    });
    const [story] = (await fetchFrontPage(search.url, 10, noWait)).stories;
    expect(story?.title).toBe("Evil red title");
  });

  test("treats a link that is not http(s) as a text post", async () => {
    using search = startFakeHnSearch({
      stories: [storyHit({ title: "Click me", url: "javascript:alert(1)" })],
    });
    const logger = createMemoryLogger();
    const [story] = (await fetchFrontPage(search.url, 10, { ...noWait, logger })).stories;
    expect(story?.url).toBeNull();
    expect(logger.lines[0]).toBe(
      "warn “Click me” has a link that is not http(s); treating it as a text post",
    );
  });

  test("throws SearchApiError when the answer has no hits list", async () => {
    using search = startFakeHnSearch({
      stories: [],
      intercept: () => Response.json({ message: "Invalid Application-ID or API key" }),
    });
    await expect(fetchFrontPage(search.url, 10, noWait)).rejects.toBeInstanceOf(SearchApiError);
  });

  test("sends a User-Agent naming the tool", async () => {
    using search = startFakeHnSearch({ stories: [] });
    await fetchFrontPage(search.url, 10, { ...noWait, userAgent: "hn-digest/0.1.0" });
    expect(search.userAgents).toEqual(["hn-digest/0.1.0"]);
  });
});

describe("fetchComments()", () => {
  test("returns the flat list with text cleaned and parents kept", async () => {
    const reply = commentHit(7, { parent_id: 1001, comment_text: "I &lt;3 it", objectID: "1002" });
    const top = commentHit(7, { objectID: "1001", comment_text: "Top<p>level", author: "ada" });
    using search = startFakeHnSearch({ stories: [], comments: { 7: [reply, top] } });
    const comments = await fetchComments(search.url, 7, { ...noWait, max: 50 });
    expect(comments).toEqual([
      {
        id: 1002,
        url: "https://news.ycombinator.com/item?id=1002",
        parentId: 1001,
        author: reply.author as string,
        text: "I <3 it",
        createdAt: reply.created_at_i as number,
      },
      {
        id: 1001,
        url: "https://news.ycombinator.com/item?id=1001",
        parentId: 7,
        author: "ada",
        text: "Top\n\nlevel",
        createdAt: top.created_at_i as number,
      },
    ]);
    expect(search.requests).toEqual(["/api/v1/search?tags=comment,story_7&hitsPerPage=50"]);
  });

  test("keeps deleted comments as empty text and skips malformed hits with one warning", async () => {
    using search = startFakeHnSearch({
      stories: [],
      comments: {
        7: [commentHit(7, { comment_text: null, author: null }), { objectID: null }, commentHit(7)],
      },
    });
    const logger = createMemoryLogger();
    const comments = await fetchComments(search.url, 7, { ...noWait, max: 50, logger });
    expect(comments.map((comment) => comment.text)).toEqual([
      "",
      expect.stringMatching(/^Comment/),
    ]);
    expect(logger.lines).toEqual(["warn Skipped 1 malformed comment hit(s) of story 7"]);
  });
});

describe("ids beyond 2^53", () => {
  // 2^53 + 1: as a JavaScript number it reads as 2^53, a neighbouring item's id.
  const BIG_STORY = "9007199254740993";
  const BIG_COMMENT = "9007199254740995";

  test("a story's and a comment's ids, and a raw parent_id number, are kept exactly", async () => {
    // Written by hand: a JavaScript object could not even hold parent_id's number.
    const raw = (hits: string) =>
      new Response(`{"hits":[${hits}]}`, { headers: { "content-type": "application/json" } });
    using search = startFakeHnSearch({
      stories: [],
      intercept: (url) =>
        url.searchParams.get("tags") === "front_page"
          ? raw(
              `{"objectID":"${BIG_STORY}","title":"Big","url":"https://example.com/","points":1,"num_comments":1}`,
            )
          : raw(
              `{"objectID":"${BIG_COMMENT}","comment_text":"Exact.","author":"x","parent_id":${BIG_STORY},"created_at_i":1}`,
            ),
    });
    const { stories } = await fetchFrontPage(search.url, 1, noWait);
    expect(stories.map((story) => story.id)).toEqual([BIG_STORY]);
    const comments = await fetchComments(search.url, BIG_STORY, { ...noWait, max: 10 });
    expect(comments.map(({ id, parentId }) => ({ id, parentId }))).toEqual([
      { id: BIG_COMMENT, parentId: BIG_STORY },
    ]);
    expect(search.requests[1]).toBe(
      `/api/v1/search?tags=comment,story_${BIG_STORY}&hitsPerPage=10`,
    );
    // Answering the story itself: top-level, not a reply to a comment that was never fetched.
    expect(buildThread(comments, BIG_STORY).map((node) => node.answers)).toEqual(["story"]);
    expect(hnItemUrl(BIG_STORY)).toBe(`https://news.ycombinator.com/item?id=${BIG_STORY}`);
  });

  test("ids that fit stay numbers", async () => {
    expect(itemId("0042")).toBe(42);
    expect(itemId(9007199254740991)).toBe(9007199254740991);
    expect(itemId("9007199254740992")).toBe("9007199254740992");
    expect(parseJsonExactly('{"a":9007199254740993,"b":12,"c":1.5e300}')).toEqual({
      a: "9007199254740993",
      b: 12,
      c: 1.5e300,
    });
  });
});
