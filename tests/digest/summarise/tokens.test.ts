import { describe, expect, test } from "bun:test";
import { cutToChars, cutToTokens, estimateTokens } from "../../../lib/digest/summarise/tokens.ts";

describe("estimateTokens()", () => {
  test("counts 3.5 ASCII characters per token, rounding up (English averages about 4)", () => {
    expect(estimateTokens("")).toBe(0);
    expect(estimateTokens("abc")).toBe(1);
    expect(estimateTokens("abcdefg")).toBe(2);
    expect(estimateTokens("x".repeat(3500))).toBe(1000);
  });

  test("counts other scripts high: a token per accented letter, 1.5 per CJK character", () => {
    expect(estimateTokens("été")).toBe(3);
    expect(estimateTokens("日本語")).toBe(5);
    expect(estimateTokens("🙂")).toBe(2);
  });
});

describe("cutToTokens()", () => {
  test("returns short text unchanged", () => {
    expect(cutToTokens("short text", 100)).toBe("short text");
  });

  test("cuts at a word boundary within the budget", () => {
    const cut = cutToTokens("alpha beta gamma delta epsilon", 3);
    expect(cut).toBe("alpha beta");
    expect(estimateTokens(cut)).toBeLessThanOrEqual(3);
  });
});

describe("cutToChars()", () => {
  test("cuts at a space near the end, never inside a surrogate pair", () => {
    expect(cutToChars("word ".repeat(20), 52)).toBe("word ".repeat(10).trimEnd());
    expect(cutToChars("ab🙂", 3)).toBe("ab");
    expect(cutToChars("short", 50)).toBe("short");
  });
});
