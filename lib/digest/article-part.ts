import { type ArticleResult, fetchArticle } from "./fetch/article.ts";
import type { Part, PipelineContext } from "./pipeline-context.ts";
import { storyName } from "./progress.ts";
import { sourceHash } from "./summarise/cache.ts";
import { articlePrompt, type PromptBudget } from "./summarise/prompt.ts";
import {
  articleReusable,
  earlierArticleNote,
  linkFailedNote,
  sawTooLittle,
} from "./summarise/reuse.ts";
import { budgetSlot, type Fallback, readStored, summarise } from "./summarise/summarise.ts";
import type { Story } from "./types.ts";

/**
 * The article half of a story. The linked article is fetched and summarised, with the post's
 * own text beside it when there is some (Show HN). When the link gives no article this time, a
 * post with text has that summarised; one without shows an earlier run's summary of the article,
 * marked with its age, or else the page's own description if it is no article (a JavaScript
 * wall, a paywall teaser, a video page), never summarised as if it were the article.
 */
export async function articlePart(
  story: Story,
  index: number,
  context: PipelineContext,
): Promise<Part> {
  const { config } = context;
  let result: ArticleResult | undefined;
  if (story.url) {
    const url = story.url;
    result = await context.fetchLimit(() => {
      context.progress.update(index, "fetching the article");
      return fetchArticle(url, {
        fetch: context.fetch,
        timeoutMs: config.articleTimeoutMs,
        maxBytes: config.articleMaxBytes,
        allow: config.allowedHosts,
        resolve: context.resolve,
        signal: context.signal,
      });
    }, index);
    if (!result.ok && !context.signal?.aborted)
      context.logger.info(`${storyName(story.title)}: no article: ${result.reason}`);
  }
  if (result?.ok) {
    const part = await summariseArticle(story, index, context, { text: result.text, notes: [] });
    return { ...part, source: articleSource(story), words: readingWords(result.text) };
  }
  if (result && !context.signal?.aborted) {
    const earlier = earlierArticle(story, index, result, context);
    if (earlier) return earlier;
  }
  if (story.storyText) {
    const notes = result
      ? [`The link gave no article (${result.reason}); the summary is of the post's own text.`]
      : [];
    const part = await summariseArticle(story, index, context, { text: null, notes });
    return { ...part, source: "post", words: readingWords(story.storyText) };
  }
  if (!result) {
    return { summary: null, notes: ["No article summary: the post has no link and no text."] };
  }
  if (result.description) {
    return {
      summary: result.description,
      source: "description",
      notes: [`No article summary: ${result.reason}; the page's own description is shown instead.`],
    };
  }
  return { summary: null, notes: [`No article summary: ${result.reason}.`] };
}

/**
 * The article's summary from an earlier run when the link gives no article this time (a site
 * down, a timeout): the reader keeps what they had rather than losing it to a passing failure,
 * and no model time is spent. Only for a post without text of its own: then any cached summary
 * was made from the article. A post with text has its text summarised instead (a cached summary
 * of it cannot be told from one of the article and the post once the text was edited).
 */
function earlierArticle(
  story: Story,
  index: number,
  failed: { reason: string },
  context: PipelineContext,
): Part | null {
  if (story.storyText) return null;
  const stored = readStored(context, story.id, "article");
  if (!stored?.summary) return null;
  context.stats.cached++;
  context.budget.reused(budgetSlot(index, "article"));
  const now = (context.now ?? Date.now)();
  const notes = [linkFailedNote(failed.reason, stored, now)];
  if (stored.shown < 1)
    notes.push(`The model saw ${Math.floor(100 * stored.shown)} % of the article.`);
  return {
    summary: stored.summary,
    source: "article",
    notes,
    coverage: { articleShare: stored.shown },
  };
}

function articleSource(story: Story): "article and post" | "article" {
  return story.storyText ? "article and post" : "article";
}

/** What an article summary is made from: the article's text (null: none) and the post's. */
function articleHash(story: Story, text: string | null): string {
  return sourceHash(["article", story.storyText ?? "", text ?? ""]);
}

/**
 * Words as a reader counts them, for reading times: space-separated runs with a letter or digit,
 * plus one per Chinese or Japanese character (written without spaces, read at about the same
 * pace). Not article-extract.ts's wordCount, a rougher count that only tells a page from junk.
 */
function readingWords(text: string): number {
  const ideographs = text.match(/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/gu);
  const spaced = text
    .replace(/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/gu, " ")
    .split(/\s+/)
    .filter((word) => /[\p{L}\p{N}]/u.test(word)).length;
  return spaced + (ideographs?.length ?? 0);
}

/**
 * The summary of the article (or, with `text` null, of the post's own text): the cached one
 * while the article and the post are unchanged (made again only when it saw too little and this
 * run has no time budget: see sawTooLittle); otherwise a new one, with a note when the model saw
 * only part of the text. When the new one fails, the cached one is shown, marked if older.
 */
async function summariseArticle(
  story: Story,
  index: number,
  context: PipelineContext,
  input: { text: string | null; notes: string[] },
): Promise<Part> {
  const content = input.text ?? story.storyText ?? "";
  const hash = articleHash(story, input.text);
  const stored = readStored(context, story.id, "article");
  const cached = stored && articleReusable(stored, hash) ? stored : undefined;
  const asCached = cached && {
    summary: cached.summary,
    notes: [...input.notes, ...cachedCoverage(cached.shown, content.length)],
    coverage: { articleShare: cached.shown },
  };
  if (asCached && !fullerNow(asCached.coverage.articleShare, story, input.text, context)) {
    context.stats.cached++;
    context.budget.reused(budgetSlot(index, "article"));
    return asCached;
  }
  const build = (budget: PromptBudget) => {
    const built = articlePrompt(story, input.text, budget);
    const notes = [...input.notes];
    if (built.truncated) notes.push(articleCoverage(built.shownChars, built.totalChars));
    const share = shareShown(built);
    const record = { sourceHash: hash, comments: 0, shown: share, latestCommentAt: 0, updates: 0 };
    return { prompt: built.prompt, notes, record, coverage: { articleShare: share } };
  };
  // Shown if a new one fails: the cached one as it is, or, the page having changed, marked older.
  const now = (context.now ?? Date.now)();
  const fallback: Fallback | undefined = !stored?.summary
    ? undefined
    : asCached
      ? { ...asCached, redo: "fuller" }
      : {
          summary: stored.summary,
          notes: [earlierArticleNote(stored, now)],
          coverage: { articleShare: stored.shown },
          redo: "update",
        };
  const kind = "article" as const;
  return summarise(
    { index, storyId: story.id, kind, title: story.title, build, fallback },
    context,
  );
}

/**
 * Whether this run, having no time budget, would show the model so much more of the text than a
 * cached summary saw (`saw`, a share) that it is worth making again.
 */
function fullerNow(
  saw: number,
  story: Story,
  text: string | null,
  context: PipelineContext,
): boolean {
  if (context.budget.budgetMs !== null || saw >= 1) return false;
  const window = { numCtx: context.config.numCtx, scale: context.calibration.scale("article") };
  return sawTooLittle(saw, shareShown(articlePrompt(story, text, window)));
}

function shareShown(built: { truncated: boolean; shownChars: number; totalChars: number }) {
  return built.truncated ? built.shownChars / Math.max(1, built.totalChars) : 1;
}

function cachedCoverage(share: number, length: number): string[] {
  return share < 1 ? [articleCoverage(Math.round(share * length), length)] : [];
}

function articleCoverage(shown: number, total: number): string {
  const percent = Math.floor((100 * shown) / Math.max(1, total));
  const count = (n: number) => n.toLocaleString("en-US");
  return `The model saw ${percent} % of the article (${count(shown)} of ${count(total)} characters).`;
}
