import type { ThreadNode } from "../types.ts";
import { cutToChars, estimateTokens } from "./tokens.ts";

/** What of a thread went into the prompt. */
export interface PackedDiscussion {
  text: string;
  /** Comments in the thread (deleted ones already dropped). */
  total: number;
  shown: number;
  /** Shown comments whose text was cut (only their opening is shown). */
  shortened: number;
  topLevel: number;
  topLevelShown: number;
}

/**
 * The opening every top-level comment gets first, in characters: at most `max`; at least
 * `preferred` when the budget allows; never below `min` (a sentence or so).
 */
export const OPENING_CHARS = { min: 60, preferred: 160, max: 600 } as const;
/** Replies are capped too in the first pass, so one long reply cannot crowd out the others. */
export const REPLY_CHARS = 300;
/** Share of the budget the top-level openings are sized to, leaving the rest for replies. */
const OPENINGS_SHARE = 0.6;
const MORE = " […]";

interface Placement {
  depth: number;
  /** Author of the comment this one answers, when that comment is in the tree. */
  parentAuthor: string | null;
}

interface Shown {
  chars: number;
  cost: number;
}

/**
 * Fits a thread into `budgetTokens`, breadth first: the opening of every top-level comment (in
 * the API's relevance order), then replies level by level (each only under a parent already
 * shown, oldest first), then the rest of the comments that were cut, while room remains. The
 * text keeps the tree's order, replies indented under their parents and marked with whom they
 * answer; a reply whose parent is missing or deleted says so.
 */
export function packDiscussion(
  roots: readonly ThreadNode[],
  budgetTokens: number,
): PackedDiscussion {
  const placement = placeAll(roots);
  const shown = new Map<ThreadNode, Shown>();
  let used = 0;
  const costOf = (node: ThreadNode, chars: number) =>
    estimateTokens(`${renderNode(node, placement.get(node), chars)}\n`);
  const tryShow = (node: ThreadNode, chars: number): boolean => {
    const cost = costOf(node, chars);
    if (used + cost > budgetTokens) return false;
    used += cost;
    shown.set(node, { chars, cost });
    return true;
  };

  const topLevel = roots.filter((node) => node.answers === "story");
  const opening = openingChars(budgetTokens, topLevel.length);
  let frontier = topLevel.filter((node) => tryShow(node, opening));
  // Comments whose parent is unknown stand with the first level of replies.
  let candidates = [
    ...frontier.flatMap((node) => node.replies),
    ...roots.filter((node) => node.answers !== "story"),
  ];
  while (candidates.length > 0) {
    frontier = candidates.filter((node) => tryShow(node, REPLY_CHARS));
    candidates = frontier.flatMap((node) => node.replies);
  }
  for (const [node, entry] of shown) {
    const full = node.comment.text.length;
    if (entry.chars >= full) continue;
    const cost = costOf(node, full);
    if (used - entry.cost + cost > budgetTokens) continue;
    used += cost - entry.cost;
    shown.set(node, { chars: full, cost });
  }

  const lines: string[] = [];
  const write = (nodes: readonly ThreadNode[]) => {
    for (const node of nodes) {
      const entry = shown.get(node);
      if (!entry) continue;
      lines.push(renderNode(node, placement.get(node), entry.chars));
      write(node.replies);
    }
  };
  write(roots);
  let shortened = 0;
  for (const [node, entry] of shown) if (entry.chars < node.comment.text.length) shortened++;
  return {
    text: lines.join("\n"),
    total: placement.size,
    shown: shown.size,
    shortened,
    topLevel: topLevel.length,
    topLevelShown: topLevel.filter((node) => shown.has(node)).length,
  };
}

/** Room a comment's header, indentation and cut mark take, in characters. */
const OVERHEAD_CHARS = 30;

/**
 * Openings sized so all top-level comments fit in part of the budget (OPENINGS_SHARE), leaving
 * room for replies; when there are too many for that, as long as the whole budget allows.
 */
function openingChars(budgetTokens: number, topLevel: number): number {
  if (topLevel === 0) return OPENING_CHARS.max;
  const perComment = (share: number) =>
    Math.floor((share * budgetTokens * 3.5) / topLevel) - OVERHEAD_CHARS;
  const chars = Math.min(
    Math.max(perComment(OPENINGS_SHARE), OPENING_CHARS.preferred),
    perComment(1),
    OPENING_CHARS.max,
  );
  return Math.max(OPENING_CHARS.min, chars);
}

function placeAll(roots: readonly ThreadNode[]): Map<ThreadNode, Placement> {
  const placement = new Map<ThreadNode, Placement>();
  const visit = (node: ThreadNode, placed: Placement) => {
    placement.set(node, placed);
    const author = authorOf(node);
    for (const reply of node.replies)
      visit(reply, { depth: placed.depth + 1, parentAuthor: author });
  };
  for (const root of roots) visit(root, { depth: 0, parentAuthor: null });
  return placement;
}

function authorOf(node: ThreadNode): string {
  return node.comment.author ?? "anonymous";
}

/** `[bob, replying to alice] text`, indented two spaces per level, continuation lines too. */
export function renderNode(node: ThreadNode, placed: Placement | undefined, chars: number): string {
  const indent = "  ".repeat(placed?.depth ?? 0);
  const text = node.comment.text;
  const body = chars < text.length ? `${cutToChars(text, chars).trimEnd()}${MORE}` : text;
  const lines = body
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line, i) => (i === 0 ? line : `${indent}  ${line}`));
  return `${indent}[${header(node, placed)}] ${lines.join("\n")}`;
}

function header(node: ThreadNode, placed: Placement | undefined): string {
  const author = authorOf(node);
  switch (node.answers) {
    case "story":
      return author;
    case "comment":
      return `${author}, replying to ${placed?.parentAuthor ?? "anonymous"}`;
    case "deleted":
      return `${author}, replying to a deleted comment`;
    case "missing":
      return `${author}, replying to a comment that was not fetched`;
  }
}
