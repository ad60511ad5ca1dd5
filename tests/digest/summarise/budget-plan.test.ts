import { describe, expect, test } from "bun:test";
import { UsageError } from "../../../lib/config/errors.ts";
import {
  BUDGET_ANSWER_TOKENS,
  MIN_ANSWER_TOKENS,
  type PlanInput,
  planBudget,
  replanAnswer,
} from "../../../lib/digest/summarise/budget-plan.ts";
import { CPU_PRIOR, GPU_PRIOR } from "../../../lib/digest/summarise/rates.ts";

const MINUTE = 60_000;

function plan(budgetMs: number | null, input: Partial<PlanInput> = {}) {
  return planBudget({
    budgetMs,
    stories: 10,
    rates: CPU_PRIOR,
    ratio: 1,
    spentMs: 0,
    promptLimit: 7600,
    answerReserve: 512,
    ...input,
  });
}

describe("planBudget(): fewer comments, then shorter answers, then fewer stories", () => {
  test("without a budget, or one that buys every window, answers keep the window's reserve", () => {
    expect(plan(null)).toEqual({ stories: 10, answerTokens: 512, cut: null });
    expect(plan(20 * MINUTE, { rates: GPU_PRIOR })).toEqual({
      stories: 10,
      answerTokens: 512,
      cut: null,
    });
  });

  test("a CPU's 12 or 20 minutes: every story, answers of about 100 tokens, nothing said", () => {
    for (const minutes of [12, 20]) {
      expect(plan(minutes * MINUTE)).toEqual({
        stories: 10,
        answerTokens: BUDGET_ANSWER_TOKENS,
        cut: null,
      });
    }
  });

  test("a little less: every story still, the answers shortened to fit, said in one line", () => {
    const tight = plan(8.5 * MINUTE);
    expect(tight.stories).toBe(10);
    expect(tight.answerTokens).toBeGreaterThanOrEqual(MIN_ANSWER_TOKENS);
    expect(tight.answerTokens).toBeLessThan(BUDGET_ANSWER_TOKENS);
    expect(tight.cut).toBe(
      `The 8.5 min budget at 24/11 tokens/s (assumed until the first answer) keeps every story with prompts at their smallest and answers of ${tight.answerTokens} tokens`,
    );
  });

  test("less again: the shortest answers and the last stories left out", () => {
    const five = plan(5 * MINUTE);
    expect(five.answerTokens).toBe(MIN_ANSWER_TOKENS);
    expect(five.stories).toBeGreaterThan(0);
    expect(five.stories).toBeLessThan(10);
    expect(five.cut).toContain(`keeps ${five.stories} of 10 stories`);
    expect(five.cut).toEndWith(
      `the last ${10 - five.stories} are left out unless answers show a faster machine`,
    );
    // Loading the model counts against the budget too.
    expect(plan(5 * MINUTE, { spentMs: 2 * MINUTE }).stories).toBeLessThan(five.stories);
  });

  test("not even one story: a UsageError naming the budget and the least that would do", () => {
    expect(() => plan(20_000)).toThrow(UsageError);
    expect(() => plan(20_000)).toThrow(/^Time budget too short for even one story: 20 s at /);
  });

  test("a re-run whose stories the cache answers plans only those needing the model", () => {
    expect(plan(5 * MINUTE, { stories: 2 }).cut).toBeNull();
    expect(plan(5 * MINUTE, { stories: 0 })).toEqual({ stories: 0, answerTokens: 512, cut: null });
  });
});

describe("planBudget() in another language", () => {
  test("answers as many words as in English: more tokens, as the language takes more", () => {
    expect(plan(12 * MINUTE, { answerRatio: 1.65 }).answerTokens).toBe(165);
    expect(plan(5 * MINUTE, { answerRatio: 2.2 }).cut).toContain("answers of 132 tokens");
  });
});

describe("replanAnswer(): the answers' length at the measured rates", () => {
  const prompts = Array.from({ length: 16 }, () => 6000);
  test("whole answers when every call's whole prompt and answer fit", () => {
    const gpu = { prefillPerSecond: 20_000, decodePerSecond: 200, answerTokens: 150 };
    expect(replanAnswer({ seconds: 60, prompts, rates: gpu, answerReserve: 512 })).toBe(512);
  });

  test("under a budget that binds: about 100 tokens, then shorter in steps of 10, never below 60", () => {
    const cpu = { ...CPU_PRIOR, answerTokens: 100 };
    const at = (seconds: number) =>
      replanAnswer({ seconds, prompts, rates: cpu, answerReserve: 512 });
    expect(at(900)).toBe(BUDGET_ANSWER_TOKENS);
    const tight = at(16 * 25);
    expect(tight % 10).toBe(0);
    expect(tight).toBeGreaterThan(MIN_ANSWER_TOKENS);
    expect(tight).toBeLessThan(BUDGET_ANSWER_TOKENS);
    expect(at(60)).toBe(MIN_ANSWER_TOKENS);
  });
});
