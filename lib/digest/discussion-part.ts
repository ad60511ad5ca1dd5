import { errorMessage } from "../text/error-message.ts";
import { USER_AGENT } from "../version.ts";
import { fetchComments } from "./fetch/hn-client.ts";
import { buildThread } from "./fetch/thread.ts";
import type { Part, PipelineContext } from "./pipeline-context.ts";
import { storyName } from "./progress.ts";
import { discussionPrompt, type PromptBudget } from "./summarise/prompt.ts";
import { summarise } from "./summarise/summarise.ts";
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
    context.logger.warn(`${storyName(story.title)}: comments unavailable: ${reason}`);
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
  const build = (budget: PromptBudget) => {
    const built = discussionPrompt(story, thread, budget);
    const notes = coverageNotes(story, comments.length, built.packed, config.maxComments);
    return { prompt: built.prompt, notes };
  };
  return summarise({ index, kind: "discussion", title: story.title, build }, context);
}

/** Says how much of the discussion the model saw, when it was not all of it. */
export function coverageNotes(
  story: Story,
  fetched: number,
  packed: {
    total: number;
    shown: number;
    shortened: number;
    topLevel: number;
    topLevelShown: number;
  },
  maxComments: number,
): string[] {
  const total = Math.max(story.numComments, packed.total);
  if (packed.shown >= total && packed.shortened === 0) return [];
  const partly = packed.shortened > 0 ? `; ${packed.shortened} of them only in part` : "";
  const capped =
    fetched >= maxComments && story.numComments > fetched
      ? ` Only ${fetched} were fetched (MAX_COMMENTS_PER_STORY / --max-comments).`
      : "";
  return [
    `The model saw ${packed.shown} of ${total} comments (${packed.topLevelShown} of ${packed.topLevel} top-level${partly}).${capped}`,
  ];
}
