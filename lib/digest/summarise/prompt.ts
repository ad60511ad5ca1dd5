import { countComments, countTopLevel } from "../fetch/thread.ts";
import type { Story, ThreadNode } from "../types.ts";
import { type PackedDiscussion, packDiscussion } from "./discussion.ts";
import { cutToTokens, estimateTokens } from "./tokens.ts";

export interface PromptBudget {
  /** The context window Ollama is asked for (options.num_ctx), in tokens. */
  numCtx: number;
}

/** The instruction around the content: the prompt is `before + content + after`. */
export interface PromptFrame {
  before: string;
  after: string;
}

export interface ArticlePrompt {
  prompt: string;
  /** True when the article was cut to fit. */
  truncated: boolean;
  /** Characters of the article text in the prompt, of `totalChars`. */
  shownChars: number;
  totalChars: number;
}

export interface DiscussionPrompt {
  prompt: string;
  packed: PackedDiscussion;
}

/** The model's prompt template (chat markers, system text) takes a few dozen tokens more. */
const TEMPLATE_TOKENS = 32;
const TRUNCATION_NOTE = "\n[… cut here to fit the model's context window]";

/**
 * Tokens kept free for the answer, also sent as `num_predict` so the answer cannot outgrow
 * them: 512 (a summary of a few sentences needs a third of that), less in a tiny window.
 */
export function answerReserve(numCtx: number): number {
  return Math.min(512, Math.floor(numCtx / 4));
}

/** Tokens the whole prompt may take: the window less the answer, the template and 3% slack. */
export function promptLimit(numCtx: number): number {
  return numCtx - answerReserve(numCtx) - TEMPLATE_TOKENS - Math.ceil(numCtx * 0.03);
}

/**
 * Fits `content` into a frame so the whole prompt stays within promptLimit. Only the content is
 * cut, never the instruction around it (Ollama would silently drop the front of a longer prompt:
 * the instruction).
 */
export function fitPrompt(frame: PromptFrame, content: string, budget: PromptBudget) {
  const available = promptLimit(budget.numCtx) - estimateTokens(frame.before + frame.after);
  if (estimateTokens(content) <= available) {
    return {
      prompt: frame.before + content + frame.after,
      truncated: false,
      shownChars: content.length,
    };
  }
  const cut = cutToTokens(content, Math.max(0, available - estimateTokens(TRUNCATION_NOTE)));
  return {
    prompt: frame.before + cut + TRUNCATION_NOTE + frame.after,
    truncated: true,
    shownChars: cut.length,
  };
}

const AFTER = '\n"""\n\nSummary:';

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** The poster's own text takes at most this share of the room when an article comes with it. */
const POST_SHARE = 0.25;

/**
 * The prompt asking for a summary of the story's article. A text post (Ask HN) is summarised
 * from its own text (`articleText` null); a post with both a link and text (Show HN) gets the
 * poster's text beside the article, since the author's words often say what the page does not.
 */
export function articlePrompt(
  story: Story,
  articleText: string | null,
  budget: PromptBudget,
): ArticlePrompt {
  const postText = story.storyText ?? "";
  const withPost = articleText !== null && postText !== "";
  const source = story.url ? `Link: ${clip(story.url, 300)}` : "A text post on Hacker News.";
  const head = [
    "Summarise the article below for a busy reader of Hacker News.",
    "Write 3 to 5 sentences of plain prose: what it is about, its main facts or claims, and why it matters.",
    withPost
      ? "Use only the poster's text and the article text; do not add a preamble or a title."
      : "Use only the article text; do not add a preamble or a title.",
    "",
    `Title: ${clip(story.title, 300)}`,
    source,
    "",
  ];
  let post = "";
  if (withPost) {
    const room = promptLimit(budget.numCtx) - estimateTokens(head.join("\n"));
    const cut = cutToTokens(postText, Math.floor(room * POST_SHARE));
    const ending = cut.length < postText.length ? " […]" : "";
    post = `The poster's own text on Hacker News:\n"""\n${cut}${ending}\n"""\n\n`;
  }
  const before = `${head.join("\n")}\n${post}Article text:\n"""\n`;
  const content = articleText ?? postText;
  const fitted = fitPrompt({ before, after: AFTER }, content, budget);
  return { ...fitted, totalChars: content.length };
}

/**
 * The prompt asking what the commenters agree on, disagree on and add, with as much of the
 * thread as fits (see packDiscussion) and a line saying how much that is.
 */
export function discussionPrompt(
  story: Story,
  thread: readonly ThreadNode[],
  budget: PromptBudget,
): DiscussionPrompt {
  const intro = [
    "Summarise the Hacker News discussion below for a busy reader.",
    "In 3 to 6 sentences of plain prose, say what commenters agree on, what they disagree on, and what facts or experience they add.",
    "Report only what the comments say; do not add a preamble or a title.",
    "Each comment is written as [author] text; a reply as [author, replying to other-author], indented under the comment it answers. A comment ending in […] was cut short.",
    "",
    `Story: ${clip(story.title, 300)}`,
  ].join("\n");
  const frame = (counts: string) => ({
    before: `${intro}\n${counts}\n\nComments:\n"""\n`,
    after: AFTER,
  });
  const total = Math.max(story.numComments, countComments(thread));
  const topLevel = countTopLevel(thread);
  // Sized with the longest form of the counts line, which the real one never exceeds.
  const sizing = frame(countsLine(total, total - 1, topLevel, topLevel));
  const available = promptLimit(budget.numCtx) - estimateTokens(sizing.before + sizing.after);
  const packed = packDiscussion(thread, Math.max(0, available));
  const { before, after } = frame(
    countsLine(total, packed.shown, packed.topLevelShown, packed.topLevel),
  );
  return { prompt: before + packed.text + after, packed };
}

function countsLine(total: number, shown: number, topShown: number, topLevel: number): string {
  if (shown >= total) return `All ${total} comments of the story are shown.`;
  return `The story has ${total} comments; ${shown} are shown, top-level comments first (${topShown} of ${topLevel}), then replies.`;
}
