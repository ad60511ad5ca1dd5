import { fetchArticle } from "./article.ts";
import type { Part, PipelineContext } from "./pipeline-context.ts";
import { articlePrompt } from "./prompt.ts";
import { summarise } from "./summarise.ts";
import type { Story } from "./types.ts";

/** The article half of a story: fetch and extract the article (or take the post's text), summarise it. */
export async function articlePart(
  story: Story,
  index: number,
  context: PipelineContext,
): Promise<Part> {
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
  const built = articlePrompt(story, text, { numCtx: config.numCtx });
  const notes = built.truncated ? [articleCoverage(built.shownChars, built.totalChars)] : [];
  return summarise(built.prompt, { index, kind: "article", notes }, context);
}

function articleCoverage(shown: number, total: number): string {
  const percent = Math.floor((100 * shown) / Math.max(1, total));
  const count = (n: number) => n.toLocaleString("en-US");
  return `The model saw ${percent} % of the article (${count(shown)} of ${count(total)} characters).`;
}
