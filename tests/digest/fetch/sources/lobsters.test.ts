import { describe, expect, test } from "bun:test";
import {
  createLobstersSource,
  hottestUrl,
  storyJsonUrl,
} from "../../../../lib/digest/fetch/lobsters/client.ts";
import type { Discussion } from "../../../../lib/digest/types.ts";
import { lobstersComment, lobstersStory, startFakeLobsters } from "../../../fakes/lobsters.ts";

const noWait = { sleep: async () => {} };

describe("Lobsters URLs", () => {
  test("hottestUrl() and storyJsonUrl() name the site's JSON", () => {
    expect(hottestUrl("https://lobste.rs")).toBe("https://lobste.rs/hottest.json");
    expect(storyJsonUrl("https://lobste.rs", "abc123")).toBe("https://lobste.rs/s/abc123.json");
  });
});

describe("createLobstersSource()", () => {
  test("reads a text post's description as its own text, and its tags in lower case", async () => {
    using site = startFakeLobsters({
      stories: (base) => [
        lobstersStory(base, {
          short_id: "ask001",
          url: "",
          title: "Ask: what are you\u0007 working on?",
          description: "<p>Tell us &amp; share.</p>",
          tags: ["Ask", "programming"],
        }),
      ],
    });
    const [story] = (await createLobstersSource(site.url).frontPage(10, noWait)).stories;
    expect(story).toMatchObject({
      id: "lobsters-ask001",
      title: "Ask: what are you working on?",
      url: null,
      type: "text",
      storyText: "Tell us & share.",
      tags: ["ask", "programming"],
    });
  });

  test("takes comment_plain when a version sends no HTML, and drops moderated comments' text", async () => {
    using site = startFakeLobsters({
      stories: (base) => [lobstersStory(base, { short_id: "plain1" })],
      comments: (base) => ({
        plain1: [
          lobstersComment(base, {
            short_id: "p1",
            comment: undefined,
            comment_plain: "Plain words.",
          }),
          lobstersComment(base, { short_id: "p2", is_moderated: true, comment: "<p>Spam</p>" }),
        ],
      }),
    });
    const source = createLobstersSource(site.url);
    const discussion: Discussion = {
      source: "lobsters",
      id: "plain1",
      url: "",
      points: 1,
      comments: 2,
    };
    const comments = await source.comments(discussion, { ...noWait, max: 100 });
    expect(comments.map((comment) => [comment.id, comment.text, comment.url])).toEqual([
      ["p1", "Plain words.", `${site.url}/c/p1`],
      ["p2", "", `${site.url}/c/p2`],
    ]);
  });

  test("sends one request at a time, the next after the last one's answer", async () => {
    const events: string[] = [];
    const fetch = (async (input: string | URL | Request) => {
      const path = new URL(String(input)).pathname;
      events.push(`start ${path}`);
      // The answer comes a turn of the event loop later: a second request sent meanwhile shows.
      await new Promise((resolve) => setImmediate(resolve));
      events.push(`end ${path}`);
      return Response.json({ comments: [] });
    }) as typeof globalThis.fetch;
    const source = createLobstersSource("http://lobsters.test");
    const discussion = (id: string): Discussion => ({
      source: "lobsters",
      id,
      url: "",
      points: 1,
      comments: 1,
    });
    await Promise.all([
      source.comments(discussion("one"), { ...noWait, fetch, max: 10 }),
      source.comments(discussion("two"), { ...noWait, fetch, max: 10 }),
    ]);
    expect(events).toEqual([
      "start /s/one.json",
      "end /s/one.json",
      "start /s/two.json",
      "end /s/two.json",
    ]);
  });
});
