import { countComments, countTopLevel } from "../fetch/thread.ts";
import type { Story, ThreadNode } from "../types.ts";
import { type PackedDiscussion, type PackOptions, packDiscussion } from "./discussion.ts";
import { type InstructionOptions, instruction } from "./instruction.ts";
import { cutToTokens, estimateTokens } from "./tokens.ts";

export interface PromptBudget {
  /** The context window Ollama is asked for (options.num_ctx), in tokens. */
  numCtx: number;
  /** Most tokens this prompt may take, when a time budget allows fewer than the window. */
  promptTokens?: number;
  /** The model's token calibration (see calibration.ts); 1 uncalibrated. */
  scale?: number;
  /** What the instruction every prompt opens with says (the answer's length). */
  instruction?: InstructionOptions;
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

/** Tokens this prompt may take: the window's limit, or less when the budget gives less. */
export function budgetLimit(budget: PromptBudget): number {
  const limit = promptLimit(budget.numCtx);
  return budget.promptTokens === undefined ? limit : Math.min(limit, budget.promptTokens);
}

/**
 * Fits `content` into a frame so the whole prompt stays within promptLimit. Only the content is
 * cut, never the instruction around it (Ollama would silently drop the front of a longer prompt:
 * the instruction).
 */
export function fitPrompt(frame: PromptFrame, content: string, budget: PromptBudget) {
  const scale = budget.scale ?? 1;
  const available = budgetLimit(budget) - estimateTokens(frame.before + frame.after, scale);
  if (estimateTokens(content, scale) <= available) {
    return {
      prompt: frame.before + content + frame.after,
      truncated: false,
      shownChars: content.length,
    };
  }
  const room = Math.max(0, available - estimateTokens(TRUNCATION_NOTE, scale));
  const cut = cutToTokens(content, room, scale);
  return {
    prompt: frame.before + cut + TRUNCATION_NOTE + frame.after,
    truncated: true,
    shownChars: cut.length,
  };
}

const AFTER = '\n"""\n\nSummary:';

/** What a discussion prompt asks of citations (citations.ts reads them back). */
export const CITE_TASK =
  "End each point with the ids of the comments it draws on, as [c3] or [c3, c8]; quote only word for word.";

export function clip(text: string, max: number): string {
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
    instruction(budget.instruction),
    "",
    `Story: ${clip(story.title, 300)}`,
    withPost
      ? "Summarise the article below; use only the poster's text and the article text."
      : "Summarise the article below; use only the article text.",
    source,
    "",
  ];
  let post = "";
  if (withPost) {
    const scale = budget.scale ?? 1;
    const room = budgetLimit(budget) - estimateTokens(head.join("\n"), scale);
    const cut = cutToTokens(postText, Math.floor(room * POST_SHARE), scale);
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
 * thread as fits (see packDiscussion), and, after the comments (it changes from run to run), a
 * line saying how much that is.
 */
export function discussionPrompt(
  story: Story,
  thread: readonly ThreadNode[],
  budget: PromptBudget,
): DiscussionPrompt {
  const before = [
    instruction(budget.instruction),
    "",
    `Story: ${clip(story.title, 300)}`,
    `Summarise the discussion below. ${CITE_TASK}`,
    "",
    "Comments:",
    '"""',
    "",
  ].join("\n");
  const total = Math.max(story.numComments, countComments(thread));
  const topLevel = countTopLevel(thread);
  return packedPrompt(before, thread, budget, {
    longestCounts: countsLine(total, total - 1, topLevel, topLevel),
    counts: (packed) => countsLine(total, packed.shown, packed.topLevelShown, packed.topLevel),
  });
}

/**
 * A discussion prompt's tail, shared by the first summary and its updates: `before`, then as much
 * of `roots` as the budget leaves room for (sized with the longest form of the counts line, which
 * the real one never exceeds), then the counts line and "Summary:".
 */
export function packedPrompt(
  before: string,
  roots: readonly ThreadNode[],
  budget: PromptBudget,
  lines: { longestCounts: string; counts: (packed: PackedDiscussion) => string },
  packOptions: Omit<PackOptions, "scale"> = {},
): DiscussionPrompt {
  const after = (counts: string) => `\n"""\n\n${counts}\n\nSummary:`;
  const scale = budget.scale ?? 1;
  const available =
    budgetLimit(budget) - estimateTokens(before + after(lines.longestCounts), scale);
  const packed = packDiscussion(roots, Math.max(0, available), { ...packOptions, scale });
  return { prompt: before + packed.text + after(lines.counts(packed)), packed };
}

function countsLine(total: number, shown: number, topShown: number, topLevel: number): string {
  if (shown >= total) return `All ${total} comments are shown.`;
  return `${shown} of ${total} comments are shown: ${topShown} of ${topLevel} top-level ones, the largest subthreads first.`;
}
