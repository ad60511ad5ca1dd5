import { describe, expect, test } from "bun:test";
import { buildThread, countComments, formatThread } from "../../lib/digest/thread.ts";
import type { Comment, ThreadNode } from "../../lib/digest/types.ts";

const STORY = 1;

function comment(id: number, parentId: number | null, text = `c${id}`, createdAt = id): Comment {
  return { id, parentId, author: `u${id}`, text, createdAt };
}

/** The tree as nested ids, easy to compare. */
function shape(nodes: ThreadNode[]): unknown[] {
  return nodes.map((node) =>
    node.replies.length > 0 ? { [node.comment.id]: shape(node.replies) } : node.comment.id,
  );
}

describe("buildThread()", () => {
  test("puts replies under their parents, oldest first", () => {
    // The API's order is by relevance: replies may come before their parents.
    const flat = [
      comment(12, 10),
      comment(11, 10),
      comment(10, STORY),
      comment(20, STORY),
      comment(13, 11),
    ];
    expect(shape(buildThread(flat))).toEqual([{ 10: [{ 11: [13] }, 12] }, 20]);
  });

  test("keeps top-level comments in the API's relevance order", () => {
    const flat = [comment(30, STORY), comment(10, STORY), comment(20, STORY)];
    expect(shape(buildThread(flat))).toEqual([30, 10, 20]);
  });

  test("drops deleted and empty comments and lifts their replies to the top level", () => {
    const flat = [
      comment(10, STORY, ""),
      comment(11, 10, "orphaned reply"),
      comment(20, STORY, "[deleted]"),
      comment(21, STORY, "   "),
      comment(22, STORY),
    ];
    expect(shape(buildThread(flat))).toEqual([11, 22]);
  });

  test("keeps a comment whose parent was not fetched at the top level", () => {
    expect(shape(buildThread([comment(10, 999), comment(11, null)]))).toEqual([10, 11]);
  });

  test("survives a parent_id cycle without losing or repeating comments", () => {
    const nodes = buildThread([comment(10, 11), comment(11, 10), comment(12, 12)]);
    expect(countComments(nodes)).toBe(3);
    expect(formatThread(nodes)).toBe("[u12] c12\n[u10] c10\n  [u11] c11");
  });
});

describe("formatThread()", () => {
  test("indents replies under their parent, multi-line text included", () => {
    const nodes = buildThread([
      comment(10, STORY, "Top\n\nsecond para"),
      comment(11, 10, "reply"),
      comment(12, 11, "deeper"),
    ]);
    expect(formatThread(nodes)).toBe("[u10] Top\n\n  second para\n  [u11] reply\n    [u12] deeper");
  });

  test("names an author-less comment anonymous", () => {
    expect(formatThread([{ comment: { ...comment(1, STORY), author: null }, replies: [] }])).toBe(
      "[anonymous] c1",
    );
  });
});
