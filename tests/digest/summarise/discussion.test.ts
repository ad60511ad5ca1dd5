import { describe, expect, test } from "bun:test";
import { buildThread } from "../../../lib/digest/fetch/thread.ts";
import {
  OPENING_CHARS,
  packDiscussion,
  REPLY_CHARS,
} from "../../../lib/digest/summarise/discussion.ts";
import { estimateTokens } from "../../../lib/digest/summarise/tokens.ts";
import type { Comment } from "../../../lib/digest/types.ts";
import { busyThread } from "../../fakes/digest-corpus.ts";

const STORY = 1;

function comment(id: number, parentId: number, text: string, author = `u${id}`): Comment {
  return { id, parentId, author, text, createdAt: id };
}

/** The busy thread as the digest sees it: parsed from the search API's hits. */
function busyComments(total = 300, topLevel = 60): Comment[] {
  return busyThread(STORY, { total, topLevel }).hits.map((hit) => ({
    id: Number(hit.objectID),
    parentId: hit.parent_id as number,
    author: hit.author as string,
    // The marker at the start is what the tests look for; the HTML does not matter here.
    text: String(hit.comment_text).replace(/<[^>]+>/g, " "),
    createdAt: hit.created_at_i as number,
  }));
}

describe("packDiscussion()", () => {
  test("shows every top-level comment of a 300-comment thread before any reply", () => {
    const thread = buildThread(busyComments(), STORY);
    const budget = 2800; // about what a 4096-token window leaves for the comments
    const packed = packDiscussion(thread, budget);
    expect(packed.total).toBe(300);
    expect(packed.topLevel).toBe(60);
    expect(packed.topLevelShown).toBe(60);
    expect(packed.shown).toBeGreaterThan(60);
    expect(packed.shown).toBeLessThan(300);
    expect(estimateTokens(packed.text)).toBeLessThanOrEqual(budget);
    for (let i = 0; i < 60; i++) {
      expect(packed.text).toContain(`] cmt${String(i).padStart(3, "0")} `);
    }
  });

  test("fits far more of the thread into a larger window", () => {
    const thread = buildThread(busyComments(), STORY);
    const small = packDiscussion(thread, 2800);
    const large = packDiscussion(thread, 7000);
    expect(large.shown).toBeGreaterThan(small.shown * 1.5);
    expect(estimateTokens(large.text)).toBeLessThanOrEqual(7000);
  });

  test("shows a reply only under its parent, indented and naming whom it answers", () => {
    const thread = buildThread(busyComments(), STORY);
    const lines = packDiscussion(thread, 2800).text.split("\n");
    const stack: string[] = [];
    for (const line of lines) {
      const match = /^( *)\[([^\],]+)(?:, replying to ([^\]]+))?\] /.exec(line);
      if (!match) continue; // a continuation line of a multi-paragraph comment
      const depth = (match[1]?.length ?? 0) / 2;
      stack.length = depth;
      if (depth > 0 && !match[3]?.startsWith("a ")) expect(match[3]).toBe(stack[depth - 1]);
      stack[depth] = match[2] ?? "";
    }
  });

  test("writes a small thread whole, in conversation order", () => {
    const thread = buildThread(
      [
        comment(11, 10, "I disagree.", "bob"),
        comment(10, STORY, "Nice work.\n\nSecond paragraph.", "alice"),
        comment(12, 11, "Why?", "alice"),
        comment(20, STORY, "Old news.", "carol"),
        comment(30, 999, "As I said above.", "dave"),
      ],
      STORY,
    );
    expect(packDiscussion(thread, 1000)).toEqual({
      text: [
        "[alice] Nice work.",
        "  Second paragraph.",
        "  [bob, replying to alice] I disagree.",
        "    [alice, replying to bob] Why?",
        "[carol] Old news.",
        "[dave, replying to a comment that was not fetched] As I said above.",
      ].join("\n"),
      total: 5,
      shown: 5,
      shortened: 0,
      topLevel: 2,
      topLevelShown: 2,
    });
  });

  test("cuts long comments to their opening, then gives back the rest while room remains", () => {
    const long = `${"word ".repeat(400)}end`;
    const thread = buildThread(
      [comment(10, STORY, long, "alice"), comment(11, 10, long, "bob")],
      STORY,
    );
    const roomy = packDiscussion(thread, 5000);
    expect(roomy.shortened).toBe(0);
    expect(roomy.text).toContain("end\n");
    const tight = packDiscussion(thread, 400);
    expect(tight.shown).toBe(2);
    expect(tight.shortened).toBe(2);
    const [top, reply] = tight.text.split("\n");
    expect(top).toEndWith(" […]");
    expect(top?.length).toBeLessThanOrEqual("[alice] ".length + OPENING_CHARS.max + 4);
    expect(reply?.length).toBeLessThanOrEqual(
      "  [bob, replying to alice] ".length + REPLY_CHARS + 4,
    );
  });

  test("keeps the most relevant top-level comments when not even their openings all fit", () => {
    const thread = buildThread(
      Array.from({ length: 50 }, (_, i) => comment(100 + i, STORY, `c${i} ${"x ".repeat(150)}`)),
      STORY,
    );
    const packed = packDiscussion(thread, 600);
    expect(packed.topLevelShown).toBeGreaterThan(0);
    expect(packed.topLevelShown).toBeLessThan(50);
    expect(packed.text.startsWith("[u100] c0 ")).toBe(true);
    expect(estimateTokens(packed.text)).toBeLessThanOrEqual(600);
  });
});
