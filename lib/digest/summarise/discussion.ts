import type { Comment, ThreadNode } from "../types.ts";
import { type Placement, placeAll, renderNode } from "./discussion-text.ts";
import { estimateTokens } from "./tokens.ts";

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
  /** The shown comments by their id in the prompt (`c3`): what the summary may cite. */
  cited: Map<string, Comment>;
}

/**
 * The opening a top-level comment gets first, in characters: sized so all openings fit in
 * OPENINGS_SHARE of the budget, but never below `min` (a sentence or so) nor above `max`.
 */
export const OPENING_CHARS = { min: 100, max: 400 } as const;
/** Replies are capped in the first passes too, so one long reply cannot crowd out the exchange. */
export const REPLY_CHARS = { min: 120, max: 300 } as const;
/** The first exchange of a main subthread, in a small budget, down to a clause. */
const FIRST_CHARS = { min: 60, max: REPLY_CHARS.max } as const;
/** Share of the budget the top-level openings may take before the largest subthreads get theirs. */
const OPENINGS_SHARE = 0.4;
/** Subthreads whose exchanges are shown first: the largest ones, where the disagreement lives. */
export const MAIN_SUBTHREADS = 3;
/** Comments of a main subthread shown before the other top-level openings: its first exchange. */
const MAIN_FIRST = 3;
/** Comments of a main subthread shown before the rest of the thread gets a turn. */
const MAIN_DEPTH = 12;
/** Characters a comment's header, indentation and cut mark take, for sizing only. */
const OVERHEAD_CHARS = 30;
/** Characters per token, for sizing openings and replies only (the fit itself is estimated). */
const SIZING_CHARS_PER_TOKEN = 3.5;

export interface PackOptions {
  /** Calibration of the token estimate for the model (see tokens.ts); 1 uncalibrated. */
  scale?: number;
  /** Roots that answer a comment left out (an update's new comments): whom, and its start. */
  rootPlacement?: ReadonlyMap<ThreadNode, Placement>;
}

interface Shown {
  chars: number;
  cost: number;
}

/**
 * Fits a thread into `budgetTokens` by importance: the three largest subthreads' first three
 * comments, then the opening of the other top-level comments (in the API's relevance order)
 * within part of the budget, then more of the exchanges of the largest subthreads in turn, then a reply at a time for every subthread, largest first, then the rest
 * of the cut comments while room remains. Within a subthread the next reply shown is the one
 * whose own replies are most numerous (the liveliest exchange), oldest first, and always under a
 * parent already shown. The text keeps the tree's order, replies indented under their parents;
 * a reply whose parent is not in the thread is never shown.
 */
export function packDiscussion(
  roots: readonly ThreadNode[],
  budgetTokens: number,
  options: PackOptions = {},
): PackedDiscussion {
  const scale = options.scale ?? 1;
  const placement = placeAll(roots, options.rootPlacement);
  const sizes = subtreeSizes(roots);
  const shown = new Map<ThreadNode, Shown>();
  let used = 0;
  const costOf = (node: ThreadNode, chars: number) =>
    estimateTokens(`${renderNode(node, placement.get(node), chars)}\n`, scale);
  const tryShow = (node: ThreadNode, chars: number, limit = budgetTokens): boolean => {
    const cost = costOf(node, chars);
    if (used + cost > limit) return false;
    used += cost;
    shown.set(node, { chars, cost });
    return true;
  };

  // A reply whose parent is not in the thread (not fetched, or deleted) would reach the model
  // without what it answers: left out, unless the caller places it (an update quotes the parent).
  const showable = roots.filter(
    (root) => root.answers === "story" || options.rootPlacement?.has(root) === true,
  );
  const bySize = [...showable].sort((a, b) => (sizes.get(b) ?? 0) - (sizes.get(a) ?? 0));
  const main = bySize.filter((root) => root.replies.length > 0).slice(0, MAIN_SUBTHREADS);
  const opening = sized(budgetTokens * OPENINGS_SHARE, showable.length, OPENING_CHARS, scale);
  const reply = sized(budgetTokens / 8, 3, REPLY_CHARS, scale);
  const subthreads = (list: readonly ThreadNode[]) =>
    list.map((root) => ({ root, frontier: shown.has(root) ? [...root.replies] : [root] }));
  const takeTurn = (
    entry: { root: ThreadNode; frontier: ThreadNode[] },
    chars = reply,
  ): boolean => {
    const next = pickNext(entry.frontier, sizes);
    if (!next) return false;
    entry.frontier.splice(entry.frontier.indexOf(next), 1);
    if (!tryShow(next, next === entry.root ? opening : chars)) return false;
    entry.frontier.push(...next.replies);
    return true;
  };
  // The roots of the main subthreads and their first exchanges come before any other opening,
  // so even a small budget shows each of them as a conversation, not a lone comment: sized so
  // all of them fit in most of the budget (what is cut may come back at the end).
  const first = sized(budgetTokens * 0.9, MAIN_SUBTHREADS * MAIN_FIRST, FIRST_CHARS, scale);
  for (const root of main) tryShow(root, Math.min(opening, first));
  let mainTurns = subthreads(main.filter((root) => shown.has(root)));
  for (let depth = 1; depth < MAIN_FIRST && mainTurns.length > 0; depth++) {
    mainTurns = mainTurns.filter((entry) => takeTurn(entry, Math.min(reply, first)));
  }
  // The other openings in relevance order, within their share (beside the exchanges above).
  const openingsLimit = used + budgetTokens * OPENINGS_SHARE;
  for (const root of showable) {
    if (!shown.has(root)) tryShow(root, opening, openingsLimit);
  }
  for (let depth = MAIN_FIRST; depth < MAIN_DEPTH && mainTurns.length > 0; depth++) {
    mainTurns = mainTurns.filter((entry) => takeTurn(entry));
  }
  const mainShown = new Set(main.filter((root) => shown.has(root)));
  let turns = [...mainTurns, ...subthreads(bySize.filter((root) => !mainShown.has(root)))];
  while (turns.length > 0) turns = turns.filter((entry) => takeTurn(entry));
  for (const [node, entry] of shown) {
    const full = node.comment.text.length;
    if (entry.chars >= full) continue;
    const cost = costOf(node, full);
    if (used - entry.cost + cost > budgetTokens) continue;
    used += cost - entry.cost;
    shown.set(node, { chars: full, cost });
  }
  return summarisePacking(roots, placement, shown);
}

function summarisePacking(
  roots: readonly ThreadNode[],
  placement: Map<ThreadNode, Placement>,
  shown: Map<ThreadNode, Shown>,
): PackedDiscussion {
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
  const topLevel = roots.filter((node) => node.answers === "story");
  const cited = new Map<string, Comment>();
  for (const node of shown.keys()) {
    const label = placement.get(node)?.label;
    if (label) cited.set(label, node.comment);
  }
  return {
    cited,
    text: lines.join("\n"),
    total: placement.size,
    shown: shown.size,
    shortened,
    topLevel: topLevel.length,
    topLevelShown: topLevel.filter((node) => shown.has(node)).length,
  };
}

/** The candidate with the most replies under it, the oldest among equals. */
function pickNext(
  frontier: readonly ThreadNode[],
  sizes: Map<ThreadNode, number>,
): ThreadNode | undefined {
  let best: ThreadNode | undefined;
  for (const node of frontier) {
    if (!best) best = node;
    else {
      const bySize = (sizes.get(node) ?? 0) - (sizes.get(best) ?? 0);
      const byTime = (node.comment.createdAt ?? 0) - (best.comment.createdAt ?? 0);
      if (bySize > 0 || (bySize === 0 && byTime < 0)) best = node;
    }
  }
  return best;
}

/** Each node's comment count with all its replies, itself included. */
function subtreeSizes(roots: readonly ThreadNode[]): Map<ThreadNode, number> {
  const sizes = new Map<ThreadNode, number>();
  const visit = (node: ThreadNode): number => {
    const size = 1 + node.replies.reduce((sum, reply) => sum + visit(reply), 0);
    sizes.set(node, size);
    return size;
  };
  for (const root of roots) visit(root);
  return sizes;
}

/** Characters per comment so `count` comments fill `tokens`, within `range`. */
function sized(
  tokens: number,
  count: number,
  range: { min: number; max: number },
  scale: number,
): number {
  const chars =
    Math.floor((tokens * SIZING_CHARS_PER_TOKEN) / scale / Math.max(1, count)) - OVERHEAD_CHARS;
  return Math.max(range.min, Math.min(range.max, chars));
}
