import type { StoredSummary } from "./cache.ts";

/**
 * When a cached discussion summary is still good enough. A discussion that grew by under a
 * quarter in under six hours is reused as it is, marked with the comments it was made from; one
 * that grew more, or is older, is updated from the previous summary plus only the new comments,
 * up to three times in a row and within a day; after that it is summarised from scratch again,
 * so a summary never drifts far from the thread.
 */
export const REUSE = {
  maxNewShare: 0.25,
  maxAgeMs: 6 * 3_600_000,
  updateMaxAgeMs: 24 * 3_600_000,
  maxUpdates: 3,
} as const;

/** What to do with a discussion, given its cached summary. */
export type DiscussionPlan =
  | { use: "cached"; stored: StoredSummary }
  | { use: "as-of"; stored: StoredSummary }
  | { use: "update"; stored: StoredSummary }
  | { use: "fresh" };

export function planDiscussion(
  stored: StoredSummary | undefined,
  current: { sourceHash: string; comments: number },
  now: number,
): DiscussionPlan {
  if (!stored) return { use: "fresh" };
  const added = current.comments - stored.comments;
  // Unchanged, or only edited or deleted comments since: nothing new to tell.
  if (stored.sourceHash === current.sourceHash || added <= 0) return { use: "cached", stored };
  const age = now - stored.createdAt;
  if (added < REUSE.maxNewShare * current.comments && age < REUSE.maxAgeMs) {
    return { use: "as-of", stored };
  }
  if (age < REUSE.updateMaxAgeMs && stored.updates < REUSE.maxUpdates && stored.summary !== "") {
    return { use: "update", stored };
  }
  return { use: "fresh" };
}

/**
 * A cached summary that saw under this share of what this run's whole window would show is made
 * again when the run has no time budget (a GPU, or --time-budget 0): one written under a CPU's
 * budget (or while Ollama had the model partly on the CPU) is not kept once a window costs
 * seconds. Under a time budget it is kept, a deliberate simplification: whether a new prompt
 * would get more room is known only when its call's turn comes, and a budgeted re-run is meant
 * to cost little. Half, not more: a first run's uncalibrated estimate alone fits up to a third
 * less text than a calibrated later one (Llama 3 articles: 0.63 of the estimate), and that is not
 * worth a call.
 */
export const FULLER_NOW = 1 / 2;

export function sawTooLittle(saw: number, wouldSee: number): boolean {
  return saw < FULLER_NOW * wouldSee;
}

/** An article's summary is reused while the article (and the post's text) stay the same. */
export function articleReusable(stored: StoredSummary | undefined, sourceHash: string): boolean {
  return stored?.sourceHash === sourceHash;
}

/** "Discussion summary as of 300 of 330 comments, written 2 hours ago." */
export function asOfNote(stored: StoredSummary, comments: number, now: number): string {
  return `Discussion summary as of ${stored.comments} of ${comments} comments, written ${agoText(now - stored.createdAt)}.`;
}

/** "Article summary of an earlier version of the page, written 3 days ago." */
export function earlierArticleNote(stored: StoredSummary, now: number): string {
  return `Article summary of an earlier version of the page, written ${agoText(now - stored.createdAt)}.`;
}

/** "The link gave no article this time (…); the summary is of the article as it was 3 hours ago." */
export function linkFailedNote(reason: string, stored: StoredSummary, now: number): string {
  return `The link gave no article this time (${reason}); the summary is of the article as it was ${agoText(now - stored.createdAt)}.`;
}

/**
 * "The comments could not be read this time (…); the summary is as of 40 of 60 comments, written
 * 3 hours ago."
 */
export function commentsFailedNote(
  reason: string,
  stored: StoredSummary,
  comments: number,
  now: number,
): string {
  return `The comments could not be read this time (${reason}); the summary is as of ${stored.comments} of ${comments} comments, written ${agoText(now - stored.createdAt)}.`;
}

function agoText(ms: number): string {
  const minutes = Math.max(0, Math.round(ms / 60_000));
  if (minutes < 60) return `${minutes} ${minutes === 1 ? "minute" : "minutes"} ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 48) return `${hours} ${hours === 1 ? "hour" : "hours"} ago`;
  return `${Math.round(hours / 24)} days ago`;
}
