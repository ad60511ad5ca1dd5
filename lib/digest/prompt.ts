import type { Story } from "./types.ts";

export interface PromptBudget {
  /** The model's context window in tokens (OLLAMA_NUM_CTX). */
  numCtx: number;
}

export interface BuiltPrompt {
  prompt: string;
  /** True when the content was cut to fit the budget. */
  truncated: boolean;
}

/** The instruction around the content: the prompt is `before + content + after`. */
export interface PromptFrame {
  before: string;
  after: string;
}
const TRUNCATION_NOTE = "\n[… cut here to fit the model's context window]";

/**
 * About 4 characters per token for English; a character outside ASCII counts as a whole
 * token, so text in other scripts is not underestimated.
 */
export function estimateTokens(text: string): number {
  let ascii = 0;
  let other = 0;
  for (const ch of text) {
    if (ch.charCodeAt(0) < 128) ascii++;
    else other++;
  }
  return Math.ceil(ascii / 4) + other;
}

/** Tokens kept free for the model's answer: a quarter of the window, at most 1024. */
export function answerReserve(numCtx: number): number {
  return Math.min(1024, Math.floor(numCtx / 4));
}

/**
 * Fits `content` into a template so the whole prompt stays within the context window minus
 * the answer reserve and a 5% safety margin. Only the content is cut, never the instruction
 * around it (Ollama would silently drop the front of a longer prompt: the instruction).
 */
export function fitPrompt(frame: PromptFrame, content: string, budget: PromptBudget): BuiltPrompt {
  const available =
    budget.numCtx -
    answerReserve(budget.numCtx) -
    Math.ceil(budget.numCtx * 0.05) -
    estimateTokens(frame.before + frame.after);
  if (estimateTokens(content) <= available) {
    return { prompt: frame.before + content + frame.after, truncated: false };
  }
  const cut = cutToTokens(content, Math.max(0, available - estimateTokens(TRUNCATION_NOTE)));
  return { prompt: frame.before + cut + TRUNCATION_NOTE + frame.after, truncated: true };
}

/** The longest prefix of `text` within `tokens`, ending at a line break or space when possible. */
export function cutToTokens(text: string, tokens: number): string {
  let ascii = 0;
  let other = 0;
  let end = 0;
  for (const ch of text) {
    if (ch.charCodeAt(0) < 128) ascii++;
    else other++;
    if (Math.ceil(ascii / 4) + other > tokens) break;
    end += ch.length;
  }
  const prefix = text.slice(0, end);
  if (end === text.length) return prefix;
  const lineBreak = prefix.lastIndexOf("\n");
  if (lineBreak > end * 0.8) return prefix.slice(0, lineBreak);
  const space = prefix.lastIndexOf(" ");
  return space > end * 0.8 ? prefix.slice(0, space) : prefix;
}

const AFTER = '\n"""\n\nSummary:';

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** The prompt asking for a summary of the story's article (or its Ask HN text). */
export function articlePrompt(
  story: Story,
  articleText: string,
  budget: PromptBudget,
): BuiltPrompt {
  const source = story.url ? `Link: ${clip(story.url, 300)}` : "A text post on Hacker News.";
  const before = [
    "Summarise the article below for a busy reader of Hacker News.",
    "Write 3 to 5 sentences of plain prose: what it is about, its main facts or claims, and why it matters.",
    "Use only the article text; do not add a preamble or a title.",
    "",
    `Title: ${clip(story.title, 300)}`,
    source,
    "",
    "Article text:",
    '"""',
    "",
  ].join("\n");
  return fitPrompt({ before, after: AFTER }, articleText, budget);
}

/** The prompt asking what the commenters agree on, disagree on and add. */
export function discussionPrompt(
  story: Story,
  threadText: string,
  budget: PromptBudget,
): BuiltPrompt {
  const before = [
    "Summarise the Hacker News discussion below for a busy reader.",
    "In 3 to 6 sentences of plain prose, say what commenters agree on, what they disagree on, and what facts or experience they add.",
    "Report only what the comments say; do not add a preamble or a title.",
    "Each comment is written as [author] text; replies are indented under the comment they answer.",
    "",
    `Story: ${clip(story.title, 300)}`,
    "",
    "Comments:",
    '"""',
    "",
  ].join("\n");
  return fitPrompt({ before, after: AFTER }, threadText, budget);
}
