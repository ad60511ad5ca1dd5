import { errorMessage } from "../text/error-message.ts";
import { USER_AGENT } from "../version.ts";
import { summariseThread } from "./discussion-summary.ts";
import { discussionsOf, SOURCES } from "./fetch/sources.ts";
import { buildThread } from "./fetch/thread.ts";
import type { Part, PipelineContext } from "./pipeline-context.ts";
import { storyName } from "./progress.ts";
import { commentsFailedNote } from "./summarise/reuse.ts";
import { budgetSlot, readStored } from "./summarise/summarise.ts";
import type { Comment, Discussion, Story, ThreadNode } from "./types.ts";

/**
 * The discussion half of a story: fetch the comments of each of its discussions (a link on two
 * sites has two), rebuild each thread, summarise them as one.
 */
export async function discussionPart(
  story: Story,
  index: number,
  context: PipelineContext,
): Promise<Part> {
  if (story.numComments === 0) {
    return { summary: null, notes: ["No discussion summary: there are no comments yet."] };
  }
  const discussions = discussionsOf(story).filter((discussion) => discussion.comments > 0);
  const read = await Promise.allSettled(
    discussions.map((discussion) => fetchDiscussion(discussion, index, context)),
  );
  const failed = read.find((result) => result.status === "rejected");
  if (failed && read.every((result) => result.status === "rejected")) {
    const reason = errorMessage(failed.reason);
    const unread = `No discussion summary: the comments could not be read (${reason}).`;
    if (context.signal?.aborted) return { summary: null, notes: [unread] };
    context.logger.warn(`${storyName(story.title)}: comments unavailable: ${reason}`);
    return earlierDiscussion(story, index, reason, context) ?? { summary: null, notes: [unread] };
  }
  const notes: string[] = [];
  const thread: ThreadNode[] = [];
  let fetched = 0;
  for (const [i, result] of read.entries()) {
    const discussion = discussions[i];
    if (!discussion) continue;
    if (result.status === "rejected") {
      const reason = errorMessage(result.reason);
      context.logger.warn(
        `${storyName(story.title)}: ${SOURCES[discussion.source].label} comments unavailable: ${reason}`,
      );
      notes.push(
        `The ${SOURCES[discussion.source].label} comments could not be read (${reason}); the summary is of the others.`,
      );
      continue;
    }
    fetched += result.value.length;
    thread.push(...buildThread(result.value, discussion.id));
  }
  if (fetched === 0) {
    // HN's comments come through its search API; Lobsters' from the site itself.
    const from = discussions.some((d) => d.source === "hn") ? "the search API" : "Lobsters";
    return { summary: null, notes: [`No discussion summary: ${from} returned no comments.`] };
  }
  if (thread.length === 0) {
    return { summary: null, notes: ["No discussion summary: every comment is deleted or empty."] };
  }
  const part = await summariseThread(story, index, { thread, fetched }, context);
  return notes.length === 0 ? part : { ...part, notes: [...notes, ...part.notes] };
}

/** One discussion's comments, through its source, when the fetch limiter gives it a turn. */
function fetchDiscussion(
  discussion: Discussion,
  index: number,
  context: PipelineContext,
): Promise<Comment[]> {
  const { config } = context;
  const source = context.sources.get(discussion.source);
  if (!source) throw new Error(`${discussion.source} is not a source of this run`);
  return context.fetchLimit(() => {
    context.progress.update(index, "fetching the comments");
    return source.comments(discussion, {
      max: config.maxComments,
      fetch: context.fetch,
      timeoutMs: config.searchTimeoutMs,
      userAgent: USER_AGENT,
      sleep: context.sleep,
      policy: context.retryPolicy,
      logger: context.logger,
      signal: context.signal,
    });
  }, index);
}

/**
 * The discussion's summary from an earlier run when the comments cannot be read this time (the
 * search API down): the reader keeps what they had, marked with how old it is; no model time.
 */
function earlierDiscussion(
  story: Story,
  index: number,
  reason: string,
  context: PipelineContext,
): Part | null {
  const stored = readStored(context, story.id, "discussion");
  if (!stored?.summary) return null;
  context.stats.cached++;
  context.budget.reused(budgetSlot(index, "discussion"));
  const now = (context.now ?? Date.now)();
  // The front page still says how many comments there are now.
  const comments = Math.max(story.numComments, stored.comments);
  return {
    summary: stored.summary,
    notes: [commentsFailedNote(reason, stored, comments, now)],
    coverage: { commentsShown: stored.shown, commentsTotal: comments },
  };
}
