/**
 * How much of a story reaches the model: a 300-comment thread (60 top-level) and a long,
 * link-heavy article, digested at two context windows. Counted from the prompts the fake
 * Ollama receives, by the marker each comment and paragraph starts with.
 */
import { loadDigestConfig } from "../lib/digest/config.ts";
import { runDigest } from "../lib/digest/digest.ts";
import { createMemoryLogger } from "../lib/log.ts";
import { busyThread, linkHeavyArticle } from "../tests/fakes/digest-corpus.ts";
import { startDigestWorld } from "../tests/fakes/digest-world.ts";
import { storyHit } from "../tests/fakes/hn-search.ts";

export interface Coverage {
  numCtx: number;
  commentsShown: number;
  comments: number;
  topLevelShown: number;
  topLevel: number;
  /** Visible article characters whose paragraph reached the prompt, of all of them. */
  articleShare: number;
}

export async function measureCoverage(numCtx: number): Promise<Coverage> {
  const story = storyHit({ title: "Coverage story", url: "/long", num_comments: 300 });
  const thread = busyThread(Number(story.objectID));
  const article = linkHeavyArticle();
  using world = startDigestWorld({
    stories: [story],
    comments: { [Number(story.objectID)]: thread.hits },
    pages: { "/long": { body: article.html } },
  });
  const config = loadDigestConfig(world.env, {
    limit: "1",
    "num-ctx": String(numCtx),
    "max-comments": "1000",
    cache: false,
  });
  const quiet = { stdout: { write() {} }, stderr: { write() {} }, logger: createMemoryLogger() };
  await runDigest(config, quiet);
  const prompts = world.ollama.generateCalls.map((call) => call.prompt);
  const articlePrompt = prompts.find((prompt) => prompt.includes("par000")) ?? "";
  const discussionPrompt = prompts.find((prompt) => prompt.includes("cmt")) ?? "";
  const shown = (marker: string) => discussionPrompt.includes(`${marker} `);
  const total = article.paragraphs.reduce((sum, p) => sum + p.text.length, 0);
  const reached = article.paragraphs
    .filter((p) => articlePrompt.includes(`${p.marker} `))
    .reduce((sum, p) => sum + p.text.length, 0);
  return {
    numCtx,
    comments: thread.markers.length,
    commentsShown: thread.markers.filter(shown).length,
    topLevel: thread.topLevelMarkers.length,
    topLevelShown: thread.topLevelMarkers.filter(shown).length,
    articleShare: total > 0 ? reached / total : 0,
  };
}

export function coverageLine(c: Coverage): string {
  const percent = (part: number, whole: number) => `${((100 * part) / whole).toFixed(1)} %`;
  return (
    `num_ctx ${String(c.numCtx).padEnd(5)} comments ${c.commentsShown}/${c.comments} (${percent(c.commentsShown, c.comments)}; ` +
    `top-level ${c.topLevelShown}/${c.topLevel}) · article text ${(100 * c.articleShare).toFixed(1)} %`
  );
}
