import { countComments } from "./fetch/thread.ts";
import type { Part, PipelineContext } from "./pipeline-context.ts";
import { type StoredSummary, sourceHash } from "./summarise/cache.ts";
import { resolveCitations } from "./summarise/citations.ts";
import { discussionPrompt, type PromptBudget } from "./summarise/prompt.ts";
import { asOfNote, planDiscussion, sawTooLittle } from "./summarise/reuse.ts";
import {
  type BuiltPrompt,
  budgetSlot,
  type Fallback,
  readStored,
  summarise,
} from "./summarise/summarise.ts";
import { discussionUpdatePrompt } from "./summarise/update-prompt.ts";
import type { Story, ThreadNode } from "./types.ts";

interface ThreadFacts {
  sourceHash: string;
  /** Comments the story has (the larger of the API's count and the thread's). */
  comments: number;
  /** Comments in the thread (fetched, deleted ones dropped). */
  inThread: number;
  latestCommentAt: number;
  /** Comments the digest knows of: the thread's, plus any left unfetched by --max-comments. */
  known: number;
  /** How many were fetched, when --max-comments held the rest back; else null. */
  cappedAt: number | null;
}

/**
 * The summary of a story's discussion, as cheaply as still serves the reader (see reuse.ts):
 * the cached one when the thread is unchanged, or marked "as of N comments" when it grew a
 * little; updated from the cached one plus the new comments when it grew more; else a new one,
 * as also when the cached one saw too little and this run has no time budget (sawTooLittle).
 */
export async function summariseThread(
  story: Story,
  index: number,
  input: { thread: readonly ThreadNode[]; fetched: number },
  context: PipelineContext,
): Promise<Part> {
  const facts = threadFacts(story, input, context.config.maxComments);
  const now = (context.now ?? Date.now)();
  const stored = readStored(context, story.id, "discussion");
  const plan = planDiscussion(stored, facts, now);
  // Seen too little for this run's room: made again from the whole thread (see sawTooLittle).
  const starved = plan.use !== "fresh" && fullerNow(plan.stored, story, input.thread, context);
  const reusable = plan.use === "cached" || plan.use === "as-of";
  const reused = reusable ? reusedPart(plan, facts, now) : undefined;
  if (reused && !starved) {
    context.stats.cached++;
    context.budget.reused(budgetSlot(index, "discussion"));
    return reused;
  }
  const { thread } = input;
  // Shown if the new summary fails: the cached one as it would have been reused, else marked older.
  const fallback = !stored?.summary
    ? undefined
    : reused
      ? { ...reused, redo: "fuller" as const }
      : earlierSummary(stored, facts, now, starved ? "fuller" : "update");
  const request = {
    index,
    storyId: story.id,
    kind: "discussion" as const,
    title: story.title,
    fallback,
  };
  // Some comment is newer than the summary: the thread's newest one says so (threadFacts).
  if (plan.use === "update" && !starved && facts.latestCommentAt > plan.stored.latestCommentAt) {
    const build = (budget: PromptBudget) => updateBuilt(story, thread, facts, plan.stored, budget);
    return summarise({ ...request, build }, context);
  }
  const build = (budget: PromptBudget): BuiltPrompt => {
    const built = discussionPrompt(story, thread, budget);
    const shown = built.packed.shown;
    return {
      prompt: built.prompt,
      notes: coverageNotes(built.packed, facts.known, facts.cappedAt),
      record: { ...recordOf(facts), shown, updates: 0 },
      coverage: { commentsShown: shown, commentsTotal: facts.known },
      finish: (summary) => resolveCitations(summary, built.packed.cited, thread),
    };
  };
  return summarise({ ...request, build }, context);
}

/** The cached summary as reused: as it is, or marked "as of N comments" (see reuse.ts). */
function reusedPart(
  plan: { use: "cached" | "as-of"; stored: StoredSummary },
  facts: ThreadFacts,
  now: number,
): Omit<Fallback, "redo"> {
  const shown = plan.stored.shown;
  const notes =
    plan.use === "as-of"
      ? [asOfNote(plan.stored, facts.comments, now)]
      : shown < facts.known
        ? [`The model saw ${shown} of ${facts.known} comments.`]
        : [];
  return {
    summary: plan.stored.summary,
    notes,
    coverage: { commentsShown: shown, commentsTotal: facts.known },
  };
}

/**
 * Whether this run, having no time budget, would show the model so many more comments than a
 * cached summary saw that it is worth making again (see sawTooLittle). Measured against the
 * comments the thread had then: a thread that only grew is updated, not redone.
 */
function fullerNow(
  stored: StoredSummary,
  story: Story,
  thread: readonly ThreadNode[],
  context: PipelineContext,
): boolean {
  if (context.budget.budgetMs !== null || stored.shown >= stored.comments) return false;
  const window = { numCtx: context.config.numCtx, scale: context.calibration.scale("discussion") };
  const wouldSee = discussionPrompt(story, thread, window).packed.shown;
  return sawTooLittle(stored.shown, Math.min(wouldSee, stored.comments));
}

/** The prompt bringing the earlier summary up to date with the new comments. */
function updateBuilt(
  story: Story,
  thread: readonly ThreadNode[],
  facts: ThreadFacts,
  stored: StoredSummary,
  budget: PromptBudget,
): BuiltPrompt {
  const built = discussionUpdatePrompt(story, thread, stored, budget);
  const shown = Math.min(facts.inThread, stored.shown + built.packed.shown);
  return {
    prompt: built.prompt,
    notes: [updateNote(stored, built.packed, shown, facts.known)],
    record: { ...recordOf(facts), shown, updates: stored.updates + 1 },
    coverage: { commentsShown: shown, commentsTotal: facts.known },
    finish: (summary) => resolveCitations(summary, built.packed.cited, thread),
  };
}

/** The cached summary, shown as of the comments it was made from when a new one fails. */
function earlierSummary(
  stored: StoredSummary,
  facts: ThreadFacts,
  now: number,
  redo: Fallback["redo"],
): Fallback {
  return {
    summary: stored.summary,
    notes: [asOfNote(stored, facts.comments, now)],
    coverage: { commentsShown: stored.shown, commentsTotal: facts.known },
    redo,
  };
}

function recordOf(facts: ThreadFacts) {
  return {
    sourceHash: facts.sourceHash,
    comments: facts.comments,
    latestCommentAt: facts.latestCommentAt,
  };
}

/** What the cache compares a thread by: its comments, their count, the newest one's time. */
function threadFacts(
  story: Story,
  input: { thread: readonly ThreadNode[]; fetched: number },
  maxComments: number,
): ThreadFacts {
  const { thread, fetched } = input;
  const parts: string[] = ["discussion"];
  let latestCommentAt = 0;
  const visit = (node: ThreadNode) => {
    parts.push(String(node.comment.id), node.comment.text);
    latestCommentAt = Math.max(latestCommentAt, node.comment.createdAt ?? 0);
    for (const reply of node.replies) visit(reply);
  };
  for (const root of thread) visit(root);
  const inThread = countComments(thread);
  const capped = fetched >= maxComments && story.numComments > fetched;
  return {
    sourceHash: sourceHash(parts),
    comments: Math.max(story.numComments, inThread),
    inThread,
    latestCommentAt,
    known: inThread + (capped ? story.numComments - fetched : 0),
    cappedAt: capped ? fetched : null,
  };
}

/**
 * Says how much of the discussion the model saw, when it was not all of it (deleted comments
 * are not counted: there is nothing in them to see).
 */
export function coverageNotes(
  packed: {
    shown: number;
    shortened: number;
    topLevel: number;
    topLevelShown: number;
  },
  total: number,
  cappedAt: number | null,
): string[] {
  if (packed.shown >= total && packed.shortened === 0) return [];
  const partly = packed.shortened > 0 ? `; ${packed.shortened} of them only in part` : "";
  const capped =
    cappedAt === null
      ? ""
      : ` Only ${cappedAt} were fetched (MAX_COMMENTS_PER_STORY / --max-comments).`;
  return [
    `The model saw ${packed.shown} of ${total} comments (${packed.topLevelShown} of ${packed.topLevel} top-level${partly}).${capped}`,
  ];
}

function updateNote(
  stored: { comments: number; createdAt: number },
  packed: { total: number; shown: number },
  shown: number,
  total: number,
): string {
  const added =
    packed.shown < packed.total
      ? `${packed.shown} of the ${packed.total} comments posted since`
      : `the ${packed.total} comments posted since`;
  return `Discussion summary updated from the one written at ${stored.comments} comments with ${added}; the model saw ${shown} of ${total} comments in all.`;
}
