import { describe, expect, test } from "bun:test";
import { buildThread, countComments, countTopLevel } from "../../../lib/digest/fetch/thread.ts";
import type { Comment, ThreadNode } from "../../../lib/digest/types.ts";

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

function answers(nodes: ThreadNode[]): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (node: ThreadNode) => {
    out[node.comment.id] = node.answers;
    node.replies.forEach(visit);
  };
  nodes.forEach(visit);
  return out;
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
    const thread = buildThread(flat, STORY);
    expect(shape(thread)).toEqual([{ 10: [{ 11: [13] }, 12] }, 20]);
    expect(answers(thread)).toEqual({
      10: "story",
      11: "comment",
      12: "comment",
      13: "comment",
      20: "story",
    });
  });

  test("keeps top-level comments in the API's relevance order", () => {
    const flat = [comment(30, STORY), comment(10, STORY), comment(20, STORY)];
    expect(shape(buildThread(flat, STORY))).toEqual([30, 10, 20]);
  });

  test("drops deleted and empty comments; their replies say they answer a deleted comment", () => {
    const flat = [
      comment(10, STORY, ""),
      comment(11, 10, "reply to a deleted comment"),
      comment(20, STORY, "[deleted]"),
      comment(21, STORY, "   "),
      comment(22, STORY),
    ];
    const thread = buildThread(flat, STORY);
    expect(shape(thread)).toEqual([11, 22]);
    expect(answers(thread)).toEqual({ 11: "deleted", 22: "story" });
    expect(countTopLevel(thread)).toBe(1);
  });

  test("marks a comment whose parent was not fetched, instead of passing it off as top-level", () => {
    const thread = buildThread([comment(10, 999), comment(11, null), comment(12, STORY)], STORY);
    expect(shape(thread)).toEqual([10, 11, 12]);
    expect(answers(thread)).toEqual({ 10: "missing", 11: "story", 12: "story" });
    expect(countTopLevel(thread)).toBe(2);
  });

  test("survives a parent_id cycle without losing or repeating comments", () => {
    const thread = buildThread([comment(10, 11), comment(11, 10), comment(12, 12)], STORY);
    expect(countComments(thread)).toBe(3);
    expect(shape(thread)).toEqual([12, { 10: [11] }]);
  });
});
