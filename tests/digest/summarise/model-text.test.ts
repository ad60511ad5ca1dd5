import { describe, expect, test } from "bun:test";
import { cleanSummary } from "../../../lib/digest/summarise/model-text.ts";

describe("cleanSummary()", () => {
  test.each([
    ["Here is a summary of the article:\n\nThe allocator is faster.", "The allocator is faster."],
    ["Here's a summary of the discussion in 4 sentences: Most agree.", "Most agree."],
    ["Sure! Here is a concise summary:\nThe allocator is faster.", "The allocator is faster."],
    ["Certainly.\n\nThe allocator is faster.", "The allocator is faster."],
    ["**Summary:**\n\nThe allocator is faster.", "The allocator is faster."],
    ["## Article Summary\n\nThe allocator is faster.", "The allocator is faster."],
    ["Summary of the discussion:\nMost agree.", "Most agree."],
    ["**Summary:** The allocator is faster.", "The allocator is faster."],
    [
      "The allocator is faster.\n\nLet me know if you would like more detail!",
      "The allocator is faster.",
    ],
  ])("drops the preamble of %j", (answer, summary) => {
    expect(cleanSummary(answer)).toBe(summary);
  });

  test("leaves a summary that merely mentions summaries or starts with 'Here'", () => {
    const text = "Here, the author argues that a summary: of sorts is possible.";
    expect(cleanSummary("The summary statistics are wrong, the author says.")).toBe(
      "The summary statistics are wrong, the author says.",
    );
    expect(cleanSummary(text)).toBe(text);
  });

  test("removes escape sequences and returns '' when only a preamble was said", () => {
    expect(cleanSummary("\u001b[31mRed\u001b[0m text")).toBe("Red text");
    expect(cleanSummary("Here is a summary of the article:")).toBe("");
  });
});
