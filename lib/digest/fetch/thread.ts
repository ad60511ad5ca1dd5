import type { Comment, ItemId, ThreadNode } from "../types.ts";

// Deleted or flagged comments come with empty or null text, or HN's placeholder for it.
const DELETED = new Set(["", "[deleted]", "[flagged]", "[dead]"]);

/**
 * Rebuilds the conversation from the search API's flat list using `parentId`. Deleted and
 * empty comments are dropped. A comment answering the story (or with no parent) is top-level;
 * one whose parent was not fetched, or was deleted, stays at the top of the tree but says so in
 * `answers`, so it is never mistaken for a top-level comment. Top-level comments keep the API's
 * relevance order; replies read oldest first, as a conversation does.
 */
export function buildThread(comments: readonly Comment[], storyId: ItemId): ThreadNode[] {
  const deleted = new Set<ItemId>();
  const byId = new Map<ItemId, ThreadNode>();
  for (const comment of comments) {
    if (DELETED.has(comment.text.trim())) deleted.add(comment.id);
    else if (!byId.has(comment.id))
      byId.set(comment.id, { comment, answers: "story", replies: [] });
  }
  const nodes = [...byId.values()];
  const roots: ThreadNode[] = [];
  for (const node of nodes) {
    const parentId = node.comment.parentId;
    const parent = parentId === null ? undefined : byId.get(parentId);
    if (parent && parent !== node) {
      node.answers = "comment";
      parent.replies.push(node);
      continue;
    }
    if (parentId !== null && parentId !== storyId) {
      node.answers = deleted.has(parentId) ? "deleted" : "missing";
    }
    roots.push(node);
  }
  // A parent_id cycle (bad data) leaves nodes unreachable from any root: lift them up.
  const reached = new Set<ThreadNode>();
  const mark = (node: ThreadNode) => {
    if (reached.has(node)) return;
    reached.add(node);
    for (const reply of node.replies) mark(reply);
  };
  for (const root of roots) mark(root);
  for (const node of nodes) {
    if (reached.has(node)) continue;
    node.answers = "missing";
    roots.push(node);
    mark(node);
  }
  const rootSet = new Set(roots);
  for (const node of nodes) {
    node.replies = node.replies.filter((reply) => !rootSet.has(reply));
    node.replies.sort(byTime);
  }
  return roots;
}

function byTime(a: ThreadNode, b: ThreadNode): number {
  return (a.comment.createdAt ?? 0) - (b.comment.createdAt ?? 0);
}

/** Counts the comments in a thread. */
export function countComments(nodes: readonly ThreadNode[]): number {
  return nodes.reduce((sum, node) => sum + 1 + countComments(node.replies), 0);
}

/** Counts the comments that answer the story itself. */
export function countTopLevel(nodes: readonly ThreadNode[]): number {
  return nodes.filter((node) => node.answers === "story").length;
}
