/**
 * How much of a story reaches the model: a 300-comment thread (60 top-level) and a long,
 * link-heavy article, digested at two context windows; and the largest subthreads of today's
 * busiest thread at a CPU's and a GPU's rates. Counted from the prompts the fake
 * Ollama receives, by the marker each comment and paragraph starts with.
 */
import { loadDigestConfig } from "../lib/digest/config.ts";
import { runDigest } from "../lib/digest/digest.ts";
import { busyThread, linkHeavyArticle } from "../tests/fakes/digest-corpus.ts";
import { startDigestWorld } from "../tests/fakes/digest-world.ts";
import { frontPageToday } from "../tests/fakes/front-page-today.ts";
import { storyHit } from "../tests/fakes/hn-search.ts";
import { llama3Tokens, quietOutput, type Rates } from "./digest-budget.ts";

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
  const quiet = quietOutput();
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

export interface SubthreadCoverage {
  label: string;
  /** Comments of each of the three largest subthreads in the discussion prompt. */
  seen: number[];
  sizes: number[];
  /** The discussion prompt's Llama 3 tokens. */
  promptTokens: number;
}

/**
 * How much of the busiest thread's three largest subthreads (132, 47 and 11 of 366 comments)
 * reaches the model in a default digest of today's front page at a machine's rates (on a CPU,
 * within the default time budget).
 */
export async function measureSubthreads(rates: Rates): Promise<SubthreadCoverage> {
  const today = frontPageToday();
  using world = startDigestWorld({
    ...today,
    ollama: {
      placement: rates.placement,
      machine: { ...rates, answerTokens: 150, countTokens: llama3Tokens },
    },
  });
  const config = loadDigestConfig(world.env, { cache: false });
  const quiet = quietOutput();
  await runDigest(config, { ...quiet, now: world.ollama.now });
  const prompt =
    world.ollama.generateCalls
      .map((call) => call.prompt)
      .find((text) => /^Story: Front-page story 1$/m.test(text) && text.includes("Comments:")) ??
    "";
  return {
    label: rates.label,
    seen: today.largest.map((markers) => markers.filter((m) => prompt.includes(`] ${m} `)).length),
    sizes: today.largest.map((markers) => markers.length),
    promptTokens: llama3Tokens(prompt),
  };
}

export function subthreadLine(c: SubthreadCoverage): string {
  const parts = c.seen.map((seen, i) => `${seen}/${c.sizes[i]}`);
  const target = c.sizes.map((size) => Math.min(10, Math.floor(size / 2)));
  return (
    `${c.label.padEnd(20)} largest subthreads ${parts.join(", ")} comments shown ` +
    `(GPU target ≥ ${target.join(", ")}; CPU ≥ 3 each) · prompt ${c.promptTokens.toLocaleString("en-US")} Llama 3 tokens`
  );
}
