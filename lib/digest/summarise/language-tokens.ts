/**
 * How many more tokens a summary takes in a language than in English, for Llama 3's tokenizer:
 * the tokens one paragraph and its translations take (bench/digest-language-tokens.ts, measured
 * offline with llama3-tokenizer-js), over the English one's. Answer limits and the words asked
 * for scale by it, so a German or Japanese summary is as long as an English one and ends before
 * the limit, not cut mid-sentence (60 German words are about 124 tokens, 60 English ones 80).
 */
export const TOKENS_VS_ENGLISH: Readonly<Record<string, number>> = {
  en: 1,
  de: 1.65,
  fr: 1.4,
  es: 1.35,
  it: 1.5,
  pt: 1.55,
  nl: 1.55,
  pl: 2,
  ru: 1.5,
  uk: 1.55,
  sv: 1.7,
  tr: 1.5,
  // 1.75 on the paragraph, 2.2 on real digest answers (as issue 36 measured): the larger kept.
  ja: 2.2,
  zh: 1.3,
  ko: 1.5,
};

/** A language the table lacks: as many tokens as the costliest measured, and some. */
export const UNKNOWN_LANGUAGE_RATIO = 2.5;

/** Words asked for per token of answer room in English: 1.3 tokens a word, and room to finish. */
const ENGLISH_WORDS_PER_TOKEN = 0.6;

/** The language's tokens per English token, by its primary subtag ("pt-BR" → pt); 1 unset. */
export function tokensVsEnglish(language: string | undefined): number {
  if (language === undefined) return 1;
  const primary = language.toLowerCase().split("-")[0] ?? "";
  return TOKENS_VS_ENGLISH[primary] ?? UNKNOWN_LANGUAGE_RATIO;
}

/** The words to ask for so an answer in `language` ends within `tokens`. */
export function wordsWithin(tokens: number, language: string | undefined): number {
  return Math.floor((tokens * ENGLISH_WORDS_PER_TOKEN) / tokensVsEnglish(language));
}
