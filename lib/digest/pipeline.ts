import type { Logger } from "../log.ts";
import { errorMessage } from "../text/error-message.ts";
import { articlePart } from "./article-part.ts";
import { discussionPart } from "./discussion-part.ts";
import { discussionsOf, openSources, SOURCE_NAMES } from "./fetch/sources.ts";
import { createLimiter } from "./limiter.ts";
import type { Part, PipelineContext, PipelineDeps } from "./pipeline-context.ts";
import { storyName } from "./progress.ts";
import { createTimeBudget, discussionWantGuess } from "./summarise/budget.ts";
import type { SummaryCache } from "./summarise/cache.ts";
import { type Calibration, createCalibration } from "./summarise/calibration.ts";
import { createModelHealth } from "./summarise/model-health.ts";
import { promptLimit } from "./summarise/prompt.ts";
import { createRateMeter } from "./summarise/rates.ts";
import { budgetSlot } from "./summarise/summarise.ts";
import type { Story, StoryDigest } from "./types.ts";

export type { PipelineConfig, PipelineDeps, PipelineStats } from "./pipeline-context.ts";

/**
 * Digests the stories: comments and articles are fetched concurrently (bounded by
 * fetchConcurrency) while the model works, model calls are bounded by `concurrency` and go to
 * the earliest story first, and each story is yielded in front-page order as soon as it is
 * ready. One story's failure becomes notes on that story, never an exception.
 */
export async function* digestStories(
  stories: readonly Story[],
  deps: PipelineDeps,
): AsyncGenerator<StoryDigest> {
  const context: PipelineContext = {
    ...deps,
    sources: deps.sources ?? openSources(SOURCE_NAMES, deps.config),
    fetchLimit: createLimiter(deps.config.fetchConcurrency),
    llmLimit: createLimiter(deps.config.concurrency),
    health: deps.health ?? createModelHealth(),
    budget:
      deps.budget ??
      createTimeBudget({
        budgetMs: null,
        slots: stories.length * 2,
        meter: createRateMeter(),
        promptLimit: promptLimit(deps.config.numCtx),
        timeoutCeilingMs: deps.config.server.timeoutMs,
      }),
    stats: deps.stats ?? { generated: 0, cached: 0, failed: 0 },
    calibration: deps.calibration ?? readCalibration(deps.cache, deps.config.model, deps.logger),
  };
  planAhead(stories, context);
  const tasks = stories.map((story, index) => digestStory(story, index, context));
  try {
    for (const task of tasks) yield await task;
  } finally {
    // If the consumer stops early, still let started work end before returning.
    await Promise.allSettled(tasks);
  }
}

/**
 * What the time budget can know before anything is fetched: a story without comments makes no
 * discussion call, and a discussion's size follows from its comment count.
 */
function planAhead(stories: readonly Story[], context: PipelineContext): void {
  const limit = promptLimit(context.config.numCtx);
  stories.forEach((story, index) => {
    const slot = budgetSlot(index, "discussion");
    const comments = Math.min(story.numComments, context.config.maxComments);
    if (comments === 0) context.budget.finish(slot);
    else context.budget.want(slot, discussionWantGuess(comments, limit));
  });
}

async function digestStory(
  story: Story,
  index: number,
  context: PipelineContext,
): Promise<StoryDigest> {
  // A part that ends (answered, failed, or with nothing to summarise) gives its time back.
  const [article, discussion] = await Promise.all([
    settle(articlePart(story, index, context), { kind: "article", story }, context).finally(() =>
      context.budget.finish(budgetSlot(index, "article")),
    ),
    settle(discussionPart(story, index, context), { kind: "discussion", story }, context).finally(
      () => context.budget.finish(budgetSlot(index, "discussion")),
    ),
  ]);
  context.progress.done(index);
  return {
    story,
    hnUrl: discussionsOf(story)[0]?.url ?? "",
    articleSummary: article.summary,
    articleSource: article.summary === null ? null : (article.source ?? "article"),
    discussionSummary: discussion.summary,
    notes: [...article.notes, ...discussion.notes, ...leftOutNotes(article, discussion, context)],
    articleWords: article.words ?? null,
    coverage: {
      commentsShown:
        discussion.summary === null ? null : (discussion.coverage?.commentsShown ?? null),
      commentsTotal:
        discussion.summary === null ? null : (discussion.coverage?.commentsTotal ?? null),
      articleShare: article.summary === null ? null : (article.coverage?.articleShare ?? null),
    },
    isNew: null,
    pointsSinceLastRun: null,
  };
}

/**
 * What the time budget left out of a story, in one note (counted in the stats when it was the
 * whole story): the budget re-planned, at the measured rates, which stories fit.
 */
function leftOutNotes(article: Part, discussion: Part, context: PipelineContext): string[] {
  if (!article.leftOut && !discussion.leftOut) return [];
  if (article.summary === null && discussion.summary === null) {
    context.stats.leftOut = (context.stats.leftOut ?? 0) + 1;
    return ["Not summarised: the time budget ran out before this story's turn."];
  }
  const kind = article.leftOut ? "article" : "discussion";
  return [`No ${kind} summary: the time budget ran out before its turn.`];
}

/** The calibration the cache remembers for the model; none when it cannot be read. */
export function readCalibration(
  cache: SummaryCache | undefined,
  model: string,
  logger: Logger,
): Calibration {
  try {
    return createCalibration(cache?.tokenSamples(model) ?? []);
  } catch (error) {
    logger.warn(`Token calibration could not be read: ${errorMessage(error)}`);
    return createCalibration();
  }
}

/** Last line of defence: whatever went wrong inside one part becomes a note on its story. */
async function settle(
  part: Promise<Part>,
  { kind, story }: { kind: string; story: Story },
  context: PipelineContext,
): Promise<Part> {
  try {
    return await part;
  } catch (error) {
    const reason = errorMessage(error);
    if (!context.signal?.aborted) {
      context.logger.error(
        `${storyName(story.title)}: unexpected failure in the ${kind}: ${reason}`,
      );
    }
    return { summary: null, notes: [`No ${kind} summary: ${reason}.`] };
  }
}
