import type { ThreadNode } from "../types.ts";
import { cutToChars } from "./tokens.ts";

/** Where a comment sits in the tree, as its line in the prompt shows it. */
export interface Placement {
  depth: number;
  /** Author of the comment this one answers, when that comment is in the tree. */
  parentAuthor: string | null;
  /** The start of the comment this one answers, when that comment is not shown above it. */
  quote?: string;
  /** The comment's short id in this prompt (`c3`), which the summary cites it by. */
  label?: string;
}

const MORE = " […]";
const FENCE = /^\s*```/;

/**
 * Where each comment sits, and its short id (`c1`, `c2`… in the tree's order); `rootPlacement`
 * places a root that answers a comment not shown.
 */
export function placeAll(
  roots: readonly ThreadNode[],
  rootPlacement?: ReadonlyMap<ThreadNode, Placement>,
): Map<ThreadNode, Placement> {
  const placement = new Map<ThreadNode, Placement>();
  const visit = (node: ThreadNode, placed: Placement) => {
    placement.set(node, { ...placed, label: `c${placement.size + 1}` });
    const author = authorOf(node);
    for (const reply of node.replies)
      visit(reply, { depth: placed.depth + 1, parentAuthor: author });
  };
  for (const root of roots) {
    visit(root, rootPlacement?.get(root) ?? { depth: 0, parentAuthor: null });
  }
  return placement;
}

function authorOf(node: ThreadNode): string {
  return node.comment.author ?? "anonymous";
}

/**
 * `[c3 bob] text` (its id, then its author), indented two spaces per level under the comment it answers, continuation lines too, cut
 * to `chars` characters. A cut inside a code block closes the block, so the model does not
 * read the rest of the prompt as code.
 */
export function renderNode(node: ThreadNode, placed: Placement | undefined, chars: number): string {
  const indent = "  ".repeat(placed?.depth ?? 0);
  const text = node.comment.text;
  const body = chars < text.length ? cutComment(text, chars) : text;
  const lines = body
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line, i) => (i === 0 ? line : `${indent}  ${line}`));
  return `${indent}[${header(node, placed)}] ${lines.join("\n")}`;
}

/** The opening of a comment with the cut mark, any code block it cuts into closed. */
export function cutComment(text: string, chars: number): string {
  const cut = cutToChars(text, chars).trimEnd();
  const fences = cut.split("\n").filter((line) => FENCE.test(line)).length;
  return fences % 2 === 1 ? `${cut}\n\`\`\`\n${MORE.trim()}` : `${cut}${MORE}`;
}

function header(node: ThreadNode, placed: Placement | undefined): string {
  const said = saidBy(node, placed);
  return placed?.label ? `${placed.label} ${said}` : said;
}

function saidBy(node: ThreadNode, placed: Placement | undefined): string {
  const author = authorOf(node);
  switch (node.answers) {
    case "story":
      return author;
    case "comment":
      // Under its parent the indentation says whom a reply answers; alone (an update's new
      // reply to an earlier comment) it says so, with the start of that comment.
      return placed?.quote
        ? `${author}, replying to ${placed.parentAuthor ?? "anonymous"}: "${placed.quote}"`
        : author;
    case "deleted":
      return `${author}, replying to a deleted comment`;
    case "missing":
      return `${author}, replying to a comment that was not fetched`;
  }
}
