import { describe, expect, test } from "bun:test";
import { htmlToText } from "../../../lib/digest/fetch/html-text.ts";
import { buildThread } from "../../../lib/digest/fetch/thread.ts";
import {
  OPENING_CHARS,
  packDiscussion,
  REPLY_CHARS,
} from "../../../lib/digest/summarise/discussion.ts";
import { cutComment } from "../../../lib/digest/summarise/discussion-text.ts";
import { estimateTokens } from "../../../lib/digest/summarise/tokens.ts";
import type { Comment, ItemId } from "../../../lib/digest/types.ts";
import { busyThread, shapedThread } from "../../fakes/digest-corpus.ts";
import type { Hit } from "../../fakes/hn-search.ts";

const STORY = 1;

function comment(id: number, parentId: number, text: string, author = `u${id}`): Comment {
  return { id, parentId, author, text, createdAt: id };
}

/** Comment hits as the digest sees them: the HTML turned into text as fetchComments does. */
function commentsOf(hits: readonly Hit[]): Comment[] {
  return hits.map((hit) => ({
    id: Number(hit.objectID),
    parentId: hit.parent_id as number,
    author: hit.author as string,
    text: htmlToText(String(hit.comment_text)),
    createdAt: hit.created_at_i as number,
  }));
}

function busyComments(total = 300, topLevel = 60): Comment[] {
  return commentsOf(busyThread(STORY, { total, topLevel }).hits);
}

/** How many of each marker list's comments start a line of the packed text. */
function seen(text: string, lists: readonly string[][]): number[] {
  return lists.map((markers) => markers.filter((m) => text.includes(`] ${m} `)).length);
}

describe("packDiscussion(): the discussions that matter", () => {
  // Today's busiest thread: 366 comments, 70 top-level, largest subthreads 132, 47 and 11.
  const shaped = shapedThread(STORY);
  const thread = buildThread(commentsOf(shaped.hits), STORY);

  test("a GPU-size window: each of the three largest subthreads shows min(10, half) or more", () => {
    const budget = 7000; // what an 8192-token window leaves for the comments
    const packed = packDiscussion(thread, budget);
    const [big, middle, small] = seen(packed.text, shaped.largest);
    expect(big).toBeGreaterThanOrEqual(10);
    expect(middle).toBeGreaterThanOrEqual(10);
    expect(small).toBeGreaterThanOrEqual(6);
    expect(packed.topLevelShown).toBe(70);
    expect(estimateTokens(packed.text)).toBeLessThanOrEqual(budget);
  });

  test("a CPU budget of about 1,000 tokens: three comments or more of each of the three", () => {
    // 20 minutes at 24 / 11 tokens/s over 20 prompts leaves about 1,100 tokens a prompt.
    for (const budget of [900, 1000]) {
      const packed = packDiscussion(thread, budget);
      for (const count of seen(packed.text, shaped.largest))
        expect(count).toBeGreaterThanOrEqual(3);
      expect(packed.topLevelShown).toBeGreaterThan(3);
      expect(estimateTokens(packed.text)).toBeLessThanOrEqual(budget);
    }
  });

  test("shows a reply under its parent, the liveliest exchange first", () => {
    const packed = packDiscussion(thread, 1000);
    const shownLines = packed.text.split("\n").filter((line) => /^ *\[/.test(line));
    // The largest subthread's root, then a reply indented under it.
    const [root] = shaped.largest[0] ?? [];
    const at = shownLines.findIndex((line) => line.includes(`] ${root} `));
    expect(at).toBeGreaterThanOrEqual(0);
    expect(shownLines[at + 1]).toMatch(/^ {2}\[[^\],]+\] cmt/);
  });
});

describe("packDiscussion()", () => {
  test("fits far more of the thread into a larger window", () => {
    const thread = buildThread(busyComments(), STORY);
    const small = packDiscussion(thread, 2800);
    const large = packDiscussion(thread, 7000);
    expect(large.shown).toBeGreaterThan(small.shown * 1.5);
    expect(estimateTokens(large.text)).toBeLessThanOrEqual(7000);
  });

  test("shows a reply only under its parent, indented, never at the top", () => {
    const comments = busyComments();
    const parentOf = new Map(comments.map((c) => [c.text.slice(0, 6), c.parentId]));
    const idOf = new Map(comments.map((c) => [c.text.slice(0, 6), c.id]));
    const lines = packDiscussion(buildThread(comments, STORY), 2800).text.split("\n");
    const stack: ItemId[] = [];
    let checked = 0;
    for (const line of lines) {
      const match = /^( *)\[[^\],]+\] (cmt\d{3}) /.exec(line);
      if (!match) continue; // a continuation line of a multi-paragraph comment
      const depth = (match[1]?.length ?? 0) / 2;
      const marker = match[2] ?? "";
      expect(parentOf.get(marker)).toBe(depth === 0 ? STORY : stack[depth - 1]);
      stack.length = depth;
      stack[depth] = idOf.get(marker) ?? -1;
      checked++;
    }
    expect(checked).toBeGreaterThan(40);
  });

  test("writes a small thread whole, in conversation order, leaving out a reply to a comment not fetched", () => {
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
    const packed = packDiscussion(thread, 1000);
    expect(packed).toMatchObject({
      text: [
        "[c1 alice] Nice work.",
        "  Second paragraph.",
        "  [c2 bob] I disagree.",
        "    [c3 alice] Why?",
        "[c4 carol] Old news.",
      ].join("\n"),
      total: 5,
      shown: 4,
      shortened: 0,
      topLevel: 2,
      topLevelShown: 2,
    });
    // Each shown comment by the id its line starts with: what the summary may cite.
    expect([...packed.cited].map(([id, comment]) => [id, comment.id])).toEqual([
      ["c1", 10],
      ["c2", 11],
      ["c3", 12],
      ["c4", 20],
    ]);
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
    expect(top?.length).toBeLessThanOrEqual("[c1 alice] ".length + OPENING_CHARS.max + 4);
    expect(reply?.length).toBeLessThanOrEqual("  [c2 bob] ".length + REPLY_CHARS.max + 4);
  });

  test("keeps the most relevant top-level comments when not even their openings all fit", () => {
    const thread = buildThread(
      Array.from({ length: 50 }, (_, i) => comment(100 + i, STORY, `c${i} ${"x ".repeat(150)}`)),
      STORY,
    );
    const packed = packDiscussion(thread, 600);
    expect(packed.topLevelShown).toBeGreaterThan(0);
    expect(packed.topLevelShown).toBeLessThan(50);
    expect(packed.text.startsWith("[c1 u100] c0 ")).toBe(true);
    expect(estimateTokens(packed.text)).toBeLessThanOrEqual(600);
  });
});

describe("cutComment()", () => {
  test("closes a code block it cuts into, and marks the cut", () => {
    const text = "Try this:\n```\nlet a = 1;\nlet b = 2;\nlet c = 3;\n```\nWorks for me.";
    expect(cutComment(text, 25)).toBe("Try this:\n```\nlet a = 1;\n```\n[…]");
    expect(cutComment("Plain words and more words", 15)).toBe("Plain words and […]");
  });

  test("leaves a closed block as it is", () => {
    const text = "```\nx\n```\nAfter the code, a long explanation follows here.";
    expect(cutComment(text, 20)).toBe("```\nx\n```\nAfter the […]");
  });
});
