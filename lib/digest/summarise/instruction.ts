import { tokensVsEnglish, wordsWithin } from "./language-tokens.ts";

/**
 * The instruction every prompt opens with, word for word the same in every call of a run, so
 * Ollama reuses its prefix cache from one call to the next: written once, first, for both kinds
 * of prompt, as short as it can be (on a CPU each token of it costs a twenty-fourth of a second
 * in every call).
 */
export interface InstructionOptions {
  /**
   * Tokens the answer may take (num_predict / max_tokens): below LONG_ANSWER_TOKENS the
   * instruction asks for that many words at most (fewer in a language that takes more tokens a
   * word: language-tokens.ts), so the answer ends before the limit cuts it.
   */
  answerTokens?: number;
  /** The answer's language, a BCP 47 code ("de", "pt-BR"); English when unset. */
  language?: string;
}

/**
 * An answer this long or longer (in English tokens; more in a language that takes more) is asked
 * for in sentences: the limit only guards.
 */
const LONG_ANSWER_TOKENS = 300;

export function instruction(options: InstructionOptions = {}): string {
  const { language } = options;
  const tokens = options.answerTokens ?? LONG_ANSWER_TOKENS;
  const length =
    tokens >= LONG_ANSWER_TOKENS * tokensVsEnglish(language)
      ? "in 3 to 6 sentences"
      : `in at most ${Math.max(20, wordsWithin(tokens, language))} words`;
  return [
    `Summarise this Hacker News story for a busy reader ${length} of plain ${languageName(options.language)} prose, whatever the text's language: no preamble or title, only what the text says.`,
    "An article: its subject, main facts or claims, why it matters. A discussion: where commenters agree and disagree, and the facts or experience they add; a reply is indented under the comment it answers; […] marks a cut.",
  ].join("\n");
}

/**
 * The language's English name, as a model reads an instruction best ("German", "Brazilian
 * Portuguese"); the code itself when it has none. "English" when unset, so the default
 * instruction is word for word what it was before languages.
 */
export function languageName(code: string | undefined): string {
  if (code === undefined) return "English";
  try {
    return new Intl.DisplayNames(["en"], { type: "language", fallback: "none" }).of(code) ?? code;
  } catch {
    return code;
  }
}
