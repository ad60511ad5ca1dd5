import type { Logger } from "../log.ts";
import { USER_AGENT } from "../version.ts";
import { fetchArticle } from "./article.ts";
import type { SummaryCache } from "./cache.ts";
import type { DigestConfig } from "./config.ts";
import { fetchComments, hnItemUrl } from "./hn-client.ts";
import { createLimiter, type Limiter } from "./limiter.ts";
import { generate } from "./ollama.ts";
import type { Progress } from "./progress.ts";
import { articlePrompt, discussionPrompt, type PromptBudget } from "./prompt.ts";
import type { RetryPolicy } from "./search-fetch.ts";
import { buildThread, countComments, formatThread } from "./thread.ts";
import type { Story, StoryDigest } from "./types.ts";

export type PipelineConfig = Pick<
  DigestConfig,
  | "searchUrl"
  | "ollamaUrl"
  | "model"
  | "maxComments"
  | "numCtx"
  | "numCtxExplicit"
  | "concurrency"
  | "fetchConcurrency"
  | "searchTimeoutMs"
  | "articleTimeoutMs"
  | "articleMaxBytes"
  | "ollamaTimeoutMs"
>;

export interface PipelineStats {
  /** Summaries written by Ollama in this run. */
  generated: number;
  /** Summaries read from the cache. */
  cached: number;
  /** Summaries that were attempted and failed. */
  failed: number;
}

export interface PipelineDeps {
  config: PipelineConfig;
  fetch?: typeof fetch;
  cache?: SummaryCache;
  logger: Logger;
  progress: Progress;
  stats?: PipelineStats;
  sleep?: (ms: number) => Promise<void>;
  retryPolicy?: RetryPolicy;
}

interface Part {
  summary: string | null;
  notes: string[];
}

interface Context extends PipelineDeps {
  fetchLimit: Limiter;
  llmLimit: Limiter;
  budget: PromptBudget;
  stats: PipelineStats;
}

/**
 * Digests the stories: comments and articles are fetched concurrently (bounded by
 * fetchConcurrency) while Ollama works, Ollama calls are bounded by `concurrency` and go to
 * the earliest story first, and each story is yielded in front-page order as soon as it is
 * ready. One story's failure becomes notes on that story, never an exception.
 */
export async function* digestStories(
  stories: readonly Story[],
  deps: PipelineDeps,
): AsyncGenerator<StoryDigest> {
  const context: Context = {
    ...deps,
    fetchLimit: createLimiter(deps.config.fetchConcurrency),
    llmLimit: createLimiter(deps.config.concurrency),
    budget: { numCtx: deps.config.numCtx },
    stats: deps.stats ?? { generated: 0, cached: 0, failed: 0 },
  };
  const tasks = stories.map((story, index) => digestStory(story, index, context));
  try {
    for (const task of tasks) yield await task;
  } finally {
    // If the consumer stops early, still let started work end before returning.
    await Promise.allSettled(tasks);
  }
}

async function digestStory(story: Story, index: number, context: Context): Promise<StoryDigest> {
  const [article, discussion] = await Promise.all([
    settle(articlePart(story, index, context), "article", context),
    settle(discussionPart(story, index, context), "discussion", context),
  ]);
  context.progress.done(index);
  return {
    story,
    hnUrl: hnItemUrl(story.id),
    articleSummary: article.summary,
    discussionSummary: discussion.summary,
    notes: [...article.notes, ...discussion.notes],
  };
}

async function articlePart(story: Story, index: number, context: Context): Promise<Part> {
  const { config } = context;
  let text: string;
  if (story.url) {
    const url = story.url;
    const result = await context.fetchLimit(() => {
      context.progress.update(index, "fetching the article");
      return fetchArticle(url, {
        fetch: context.fetch,
        timeoutMs: config.articleTimeoutMs,
        maxBytes: config.articleMaxBytes,
      });
    }, index);
    if (!result.ok) {
      context.logger.info(`Story ${story.id}: no article: ${result.reason}`);
      return { summary: null, notes: [`No article summary: ${result.reason}.`] };
    }
    text = result.text;
  } else if (story.storyText) {
    text = story.storyText;
  } else {
    return { summary: null, notes: ["No article summary: the post has no link and no text."] };
  }
  const built = articlePrompt(story, text, context.budget);
  const notes = built.truncated
    ? ["The article was cut to fit the model's context window before summarising."]
    : [];
  return summarise(built.prompt, { index, kind: "article", notes }, context);
}

async function discussionPart(story: Story, index: number, context: Context): Promise<Part> {
  const { config } = context;
  if (story.numComments === 0) {
    return { summary: null, notes: ["No discussion summary: there are no comments yet."] };
  }
  let comments: Awaited<ReturnType<typeof fetchComments>>;
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
      });
    }, index);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    context.logger.warn(`Story ${story.id}: comments unavailable: ${reason}`);
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
  const thread = buildThread(comments);
  if (thread.length === 0) {
    return { summary: null, notes: ["No discussion summary: every comment is deleted or empty."] };
  }
  const built = discussionPrompt(story, formatThread(thread), context.budget);
  const notes = built.truncated
    ? [
        `The discussion (${countComments(thread)} comments) was cut to fit the model's context window.`,
      ]
    : [];
  return summarise(built.prompt, { index, kind: "discussion", notes }, context);
}

async function summarise(
  prompt: string,
  part: { index: number; kind: "article" | "discussion"; notes: string[] },
  context: Context,
): Promise<Part> {
  const { config, cache, stats } = context;
  const cached = readCache(cache, config.model, prompt, context.logger);
  if (cached !== undefined) {
    stats.cached++;
    return { summary: cached, notes: part.notes };
  }
  // Article before discussion, earlier stories before later ones: output streams in order.
  const priority = part.index * 2 + (part.kind === "article" ? 0 : 1);
  try {
    const summary = await context.llmLimit(() => {
      context.progress.update(part.index, `summarising the ${part.kind}`);
      return generate(
        config.ollamaUrl,
        {
          model: config.model,
          prompt,
          numCtx: config.numCtxExplicit ? config.numCtx : undefined,
        },
        { fetch: context.fetch, timeoutMs: config.ollamaTimeoutMs },
      );
    }, priority);
    stats.generated++;
    writeCache(cache, { model: config.model, prompt, summary }, context.logger);
    return { summary, notes: part.notes };
  } catch (error) {
    stats.failed++;
    const reason = error instanceof Error ? error.message : String(error);
    context.logger.warn(`Story ${part.index + 1}: ${part.kind} summary failed: ${reason}`);
    const label = part.kind === "article" ? "Article" : "Discussion";
    return { summary: null, notes: [...part.notes, `${label} summary failed: ${reason}.`] };
  }
}

/** Last line of defence: whatever went wrong inside one part becomes a note on its story. */
async function settle(part: Promise<Part>, kind: string, context: Context): Promise<Part> {
  try {
    return await part;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    context.logger.error(`Unexpected failure in the ${kind} of a story: ${reason}`);
    return { summary: null, notes: [`No ${kind} summary: ${reason}.`] };
  }
}

function readCache(
  cache: SummaryCache | undefined,
  model: string,
  prompt: string,
  logger: Logger,
): string | undefined {
  try {
    return cache?.get(model, prompt);
  } catch (error) {
    logger.warn(
      `Summary cache could not be read: ${error instanceof Error ? error.message : error}`,
    );
    return undefined;
  }
}

function writeCache(
  cache: SummaryCache | undefined,
  entry: { model: string; prompt: string; summary: string },
  logger: Logger,
): void {
  try {
    cache?.set(entry.model, entry.prompt, entry.summary);
  } catch (error) {
    logger.warn(
      `Summary cache could not be written: ${error instanceof Error ? error.message : error}`,
    );
  }
}
