import { describe, expect, test } from "bun:test";
import {
  asOfNote,
  earlierArticleNote,
  planDiscussion,
  REUSE,
  sawTooLittle,
} from "../../../lib/digest/summarise/reuse.ts";
import { storedSummary } from "../../fakes/stored-summary.ts";

const HOUR = 3_600_000;
const stored = storedSummary({ summary: "They argue about caches.", sourceHash: "old" });

describe("planDiscussion()", () => {
  test("summarises from scratch without a cached summary", () => {
    expect(planDiscussion(undefined, { sourceHash: "h", comments: 10 }, 0)).toEqual({
      use: "fresh",
    });
  });

  test("uses the cached summary of an unchanged thread, however old", () => {
    const plan = planDiscussion(stored, { sourceHash: "old", comments: 300 }, 100 * HOUR);
    expect(plan.use).toBe("cached");
  });

  test("uses it too when comments were only edited or deleted since", () => {
    expect(planDiscussion(stored, { sourceHash: "new", comments: 296 }, 100 * HOUR).use).toBe(
      "cached",
    );
  });

  test("reuses it as of its comments when under a quarter is new and it is under six hours old", () => {
    const now = REUSE.maxAgeMs - 1;
    expect(planDiscussion(stored, { sourceHash: "new", comments: 399 }, now).use).toBe("as-of");
    // 100 of 400 is a quarter: no longer "a little".
    expect(planDiscussion(stored, { sourceHash: "new", comments: 400 }, now).use).toBe("update");
    expect(planDiscussion(stored, { sourceHash: "new", comments: 310 }, REUSE.maxAgeMs).use).toBe(
      "update",
    );
  });

  test("updates at most three times in a row and within a day, then starts over", () => {
    const grown = { sourceHash: "new", comments: 600 };
    expect(planDiscussion({ ...stored, updates: 2 }, grown, HOUR).use).toBe("update");
    expect(planDiscussion({ ...stored, updates: 3 }, grown, HOUR).use).toBe("fresh");
    expect(planDiscussion(stored, grown, REUSE.updateMaxAgeMs).use).toBe("fresh");
  });
});

describe("asOfNote()", () => {
  test("says how many comments the summary was made from and how long ago", () => {
    expect(asOfNote(stored, 330, 2 * HOUR)).toBe(
      "Discussion summary as of 300 of 330 comments, written 2 hours ago.",
    );
    expect(asOfNote(stored, 330, 20 * 60_000)).toBe(
      "Discussion summary as of 300 of 330 comments, written 20 minutes ago.",
    );
    expect(asOfNote(stored, 330, 47 * HOUR)).toBe(
      "Discussion summary as of 300 of 330 comments, written 47 hours ago.",
    );
    expect(asOfNote(stored, 330, 75 * HOUR)).toBe(
      "Discussion summary as of 300 of 330 comments, written 3 days ago.",
    );
  });
});

describe("sawTooLittle()", () => {
  test("redoes a summary starved by a budget, not one that only predates the calibration", () => {
    // A 366-comment thread under a CPU's budget: 9 comments, where a whole window shows 174.
    expect(sawTooLittle(9, 174)).toBe(true);
    // An article seen at 29.5 % uncalibrated, 46.8 % calibrated (Llama 3 counts 0.63 of the estimate).
    expect(sawTooLittle(0.295, 0.468)).toBe(false);
    expect(sawTooLittle(0.49, 1)).toBe(true);
    expect(sawTooLittle(40, 40)).toBe(false);
  });
});

describe("earlierArticleNote()", () => {
  test("says the summary is of an earlier version of the page, and how old it is", () => {
    expect(earlierArticleNote(stored, HOUR)).toBe(
      "Article summary of an earlier version of the page, written 1 hour ago.",
    );
  });
});
