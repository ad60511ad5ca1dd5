import { errorMessage } from "../text/error-message.ts";
import { USER_AGENT } from "../version.ts";
import { summariseThread } from "./discussion-summary.ts";
import { fetchComments } from "./fetch/hn-client.ts";
import { buildThread } from "./fetch/thread.ts";
import type { Part, PipelineContext } from "./pipeline-context.ts";
import { storyName } from "./progress.ts";
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
    if (!context.signal?.aborted) {
      context.logger.warn(`${storyName(story.title)}: comments unavailable: ${reason}`);
    }
    return {
      summary: null,
      notes: [`No discussion summary: the comments could not be read (${reason}).`],
    };
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
