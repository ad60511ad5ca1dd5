import { errorMessage } from "../text/error-message.ts";
import { USER_AGENT } from "../version.ts";
import { summariseThread } from "./discussion-summary.ts";
import { fetchComments } from "./fetch/hn-client.ts";
import { buildThread } from "./fetch/thread.ts";
import type { Part, PipelineContext } from "./pipeline-context.ts";
import { storyName } from "./progress.ts";
import { commentsFailedNote } from "./summarise/reuse.ts";
import { budgetSlot, readStored } from "./summarise/summarise.ts";
import type { Comment, Story } from "./types.ts";

/** The discussion half of a story: fetch the comments, rebuild the thread, summarise it. */
export async function discussionPart(
  story: Story,
  index: number,
  context: PipelineContext,
): Promise<Part> {
  const { config } = context;
  if (story.numComments === 0) {
    return { summary: null, notes: ["No discussion summary: there are no comments yet."] };
  }
  let comments: Comment[];
  try {
    comments = await context.fetchLimit(() => {
      context.progress.update(index, "fetching the comments");
      return fetchComments(config.searchUrl, story.id, {
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
  } catch (error) {
    const reason = errorMessage(error);
    const unread = `No discussion summary: the comments could not be read (${reason}).`;
    if (context.signal?.aborted) return { summary: null, notes: [unread] };
    context.logger.warn(`${storyName(story.title)}: comments unavailable: ${reason}`);
    return earlierDiscussion(story, index, reason, context) ?? { summary: null, notes: [unread] };
  }
  if (comments.length === 0) {
    return {
      summary: null,
      notes: ["No discussion summary: the search API returned no comments."],
    };
  }
  const thread = buildThread(comments, story.id);
  if (thread.length === 0) {
    return { summary: null, notes: ["No discussion summary: every comment is deleted or empty."] };
  }
  return summariseThread(story, index, { thread, fetched: comments.length }, context);
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
