import { describe, expect, test } from "bun:test";
import { instruction } from "../../../lib/digest/summarise/instruction.ts";
import {
  TOKENS_VS_ENGLISH,
  tokensVsEnglish,
  UNKNOWN_LANGUAGE_RATIO,
  wordsWithin,
} from "../../../lib/digest/summarise/language-tokens.ts";

describe("tokensVsEnglish()", () => {
  test("looks a language up by its primary subtag; an unknown one gets the safe default", () => {
    expect(tokensVsEnglish(undefined)).toBe(1);
    expect(tokensVsEnglish("en")).toBe(1);
    expect(tokensVsEnglish("pt-BR")).toBe(TOKENS_VS_ENGLISH.pt ?? 0);
    expect(tokensVsEnglish("DE")).toBe(TOKENS_VS_ENGLISH.de ?? 0);
    expect(tokensVsEnglish("hi")).toBe(UNKNOWN_LANGUAGE_RATIO);
    // The default is above every measured language.
    expect(Math.max(...Object.values(TOKENS_VS_ENGLISH))).toBeLessThan(UNKNOWN_LANGUAGE_RATIO);
  });
});

describe("wordsWithin() and the instruction", () => {
  test("the same words in every language for answers sized by its tokens", () => {
    expect(wordsWithin(100, "en")).toBe(60);
    for (const language of ["de", "ja", "hi"]) {
      const tokens = Math.ceil(100 * tokensVsEnglish(language));
      expect(wordsWithin(tokens, language)).toBe(60);
    }
    // A German answer limit of 100 tokens asks for fewer words than an English one.
    expect(wordsWithin(100, "de")).toBeLessThan(40);
  });

  test("asks for sentences only when the limit leaves room for them in that language", () => {
    expect(instruction({ answerTokens: 512, language: "de" })).toContain("in 3 to 6 sentences");
    expect(instruction({ answerTokens: 512, language: "ja" })).toContain("in at most 139 words");
    expect(instruction({ answerTokens: 100 })).toContain("in at most 60 words");
  });
});
