import type { Comment, ThreadNode } from "./types.ts";

// Deleted or flagged comments come with empty or null text, or HN's placeholder for it.
const DELETED = new Set(["", "[deleted]", "[flagged]", "[dead]"]);

/**
 * Rebuilds the conversation from the search API's flat list using `parentId`. Deleted and
 * empty comments are dropped; a comment whose parent is not in the list (not fetched, or
 * dropped) stays at the top level. Top-level comments keep the API's relevance order;
 * replies read oldest first, as a conversation does.
 */
export function buildThread(comments: readonly Comment[]): ThreadNode[] {
  const kept = comments.filter((comment) => !DELETED.has(comment.text.trim()));
  const byId = new Map<number, ThreadNode>();
  for (const comment of kept) {
    if (!byId.has(comment.id)) byId.set(comment.id, { comment, replies: [] });
  }
  const nodes = [...byId.values()];
  const roots: ThreadNode[] = [];
  for (const node of nodes) {
    const parent = node.comment.parentId === null ? undefined : byId.get(node.comment.parentId);
    if (parent && parent !== node) parent.replies.push(node);
    else roots.push(node);
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

/**
 * Writes the thread as indented text, replies under their parents:
 * `[alice] text` then `  [bob] reply`. Multi-line comments keep their indentation.
 */
export function formatThread(nodes: readonly ThreadNode[], depth = 0): string {
  const indent = "  ".repeat(depth);
  return nodes
    .map((node) => {
      const author = node.comment.author ?? "anonymous";
      const body = node.comment.text
        .split("\n")
        .map((line, i) => (i === 0 || line === "" ? line : `${indent}  ${line}`))
        .join("\n");
      const own = `${indent}[${author}] ${body}`;
      return node.replies.length > 0 ? `${own}\n${formatThread(node.replies, depth + 1)}` : own;
    })
    .join("\n");
}
