import { describe, expect, test } from "bun:test";
import {
  budgetFor,
  CPU_DEFAULT_BUDGET_MS,
  createTimeBudget,
  discussionWantGuess,
  MIN_PROMPT_TOKENS,
  type TimeBudget,
  waterFill,
} from "../../../lib/digest/summarise/budget.ts";
import { replanAnswer } from "../../../lib/digest/summarise/budget-plan.ts";
import type { ModelAnswer } from "../../../lib/digest/summarise/models/model-client.ts";
import { CPU_PRIOR, createRateMeter, GPU_PRIOR } from "../../../lib/digest/summarise/rates.ts";

/** An answer as a machine of these rates reports it. */
function answerAt(
  rates: { prefill: number; decode: number },
  promptTokens: number,
  answerTokens = 150,
): ModelAnswer {
  const promptMs = (promptTokens / rates.prefill) * 1000;
  const answerMs = (answerTokens / rates.decode) * 1000;
  return {
    text: "A summary.",
    doneReason: "stop",
    promptTokens,
    answerTokens,
    timings: { promptMs, answerMs, loadMs: 0, wallMs: promptMs + answerMs },
  };
}

const CPU = { prefill: 24, decode: 11 };
const GPU = { prefill: 20_000, decode: 200 };

function budget(budgetMs: number | null, slots = 20, timeoutCeilingMs?: number) {
  return createTimeBudget({
    budgetMs,
    slots,
    meter: createRateMeter(),
    promptLimit: 7600,
    timeoutCeilingMs,
  });
}

describe("createRateMeter()", () => {
  test("leaves out of the prefill rate a prompt Ollama mostly took from its prefix cache", () => {
    const meter = createRateMeter();
    meter.record(answerAt(CPU, 2_000));
    // 1,900 of 2,100 tokens were cached: counted whole, timed for the 200 read.
    const cached = answerAt(CPU, 200);
    meter.record({ ...cached, promptTokens: 2_100 });
    expect(meter.rates().prefillPerSecond).toBeCloseTo(CPU.prefill, 6);
    expect(meter.rates().decodePerSecond).toBeCloseTo(CPU.decode, 6);
    // A prompt read a little faster (a shared instruction) still counts.
    meter.record(answerAt({ ...CPU, prefill: CPU.prefill * 1.2 }, 2_000));
    expect(meter.rates().prefillPerSecond).toBeGreaterThan(CPU.prefill);
    expect(meter.answers).toBe(3);
  });
});

describe("waterFill()", () => {
  test("shares by weight, and what a capped item leaves goes to the others", () => {
    const shares = waterFill(3000, [
      { key: 0, cap: 500, weight: 1 },
      { key: 1, cap: 10_000, weight: 1 },
      { key: 2, cap: 10_000, weight: 2 },
    ]);
    expect(shares.get(0)).toBe(500);
    expect(shares.get(1)).toBeCloseTo(2500 / 3, 6);
    expect(shares.get(2)).toBeCloseTo(5000 / 3, 6);
  });

  test("gives every item its cap when the total allows", () => {
    const shares = waterFill(1e9, [
      { key: 0, cap: 100, weight: 1 },
      { key: 1, cap: 200, weight: 1.5 },
    ]);
    expect([shares.get(0), shares.get(1)]).toEqual([100, 200]);
  });
});

describe("budgetFor()", () => {
  test("takes --time-budget when given, 0 meaning none", () => {
    expect(budgetFor(900_000, { placement: "gpu", loadMs: null })).toBe(900_000);
    expect(budgetFor(0, { placement: "cpu", loadMs: null })).toBeNull();
  });

  test("defaults to 20 minutes unless the model is wholly on a GPU", () => {
    expect(budgetFor(undefined, { placement: "gpu", loadMs: null })).toBeNull();
    expect(budgetFor(undefined, { placement: "cpu", loadMs: null })).toBe(CPU_DEFAULT_BUDGET_MS);
    expect(budgetFor(undefined, { placement: "partial", loadMs: null })).toBe(20 * 60_000);
    expect(budgetFor(undefined, null)).toBe(20 * 60_000);
  });
});

describe("createTimeBudget()", () => {
  test("without a budget, every prompt gets what it wants, up to the window", () => {
    const plan = budget(null);
    plan.want(0, 3000);
    plan.want(1, 50_000);
    expect(plan.tokensFor(0)).toBe(3000);
    expect(plan.tokensFor(1)).toBe(7600);
  });

  test("shares a CPU's 20 minutes among the calls to come, discussions weighing more", () => {
    const plan = budget(20 * 60_000);
    for (let slot = 0; slot < 20; slot++) plan.want(slot, 7000);
    const article = plan.tokensFor(0);
    const discussion = plan.tokensFor(1);
    expect(article).toBeGreaterThanOrEqual(MIN_PROMPT_TOKENS);
    expect(article).toBeLessThan(1500);
    expect(discussion).toBeGreaterThan(article);
    // The whole plan at the prior's rates fits the budget.
    const seconds =
      (10 * (article + discussion)) / CPU_PRIOR.prefillPerSecond +
      (20 * CPU_PRIOR.answerTokens) / CPU_PRIOR.decodePerSecond;
    expect(seconds).toBeLessThanOrEqual(20 * 60);
  });

  test("keeps a reused slot's share out of the plan, while a finished one's goes to the others", () => {
    const plan = (end: (run: TimeBudget, slot: number) => void) => {
      const run = budget(20 * 60_000);
      for (let slot = 0; slot < 20; slot++) run.want(slot, 7000);
      for (let slot = 0; slot < 16; slot++) end(run, slot);
      return run.tokensFor(17);
    };
    const everyCall = budget(20 * 60_000);
    for (let slot = 0; slot < 20; slot++) everyCall.want(slot, 7000);
    const share = everyCall.tokensFor(17);
    // Sixteen summaries reused: the last four calls get what they would have in a full run.
    const afterReuse = plan((run, slot) => run.reused(slot));
    expect(afterReuse).toBeGreaterThanOrEqual(share);
    expect(afterReuse).toBeLessThan(share * 1.5);
    // Sixteen calls with nothing to summarise: their time goes to the four left.
    expect(plan((run, slot) => run.finish(slot))).toBeGreaterThan(share * 3);
  });

  test("a story with one half reused lends that half's share to the other, still to come", () => {
    const plan = (end: (run: TimeBudget, slot: number) => void) => {
      const run = budget(20 * 60_000);
      for (let slot = 0; slot < 20; slot++) run.want(slot, 7000);
      // Yesterday's articles reused; their discussions grew and go to the model.
      for (let slot = 0; slot < 16; slot += 2) end(run, slot);
      return run.tokensFor(1);
    };
    expect(plan((run, slot) => run.reused(slot))).toBe(plan((run, slot) => run.finish(slot)));
    // A story with no comments and its article reused needed no call at all: its article's share
    // is kept out (a finished half's goes to the others, as ever).
    const quiet = budget(20 * 60_000);
    const busy = budget(20 * 60_000);
    for (let slot = 0; slot < 20; slot++) {
      quiet.want(slot, 7000);
      busy.want(slot, 7000);
    }
    for (let slot = 0; slot < 16; slot++) {
      quiet[slot % 2 === 0 ? "reused" : "finish"](slot);
      busy.finish(slot);
    }
    expect(quiet.tokensFor(17)).toBeLessThan(0.9 * busy.tokensFor(17));
  });

  test("reserves answers at the length models give (the prior's, then measured), not the cap", () => {
    const capped = (answerTokens: number) => {
      const run = createTimeBudget({
        budgetMs: 20 * 60_000,
        slots: 20,
        meter: createRateMeter(),
        promptLimit: 7600,
        answerTokens,
      });
      for (let slot = 0; slot < 20; slot++) run.want(slot, 7000);
      return run;
    };
    const reserve = capped(512);
    expect(reserve.tokensFor(1)).toBe(capped(CPU_PRIOR.answerTokens).tokensFor(1));
    // Answers measured shorter than the prior's leave the prompts more.
    const before = reserve.tokensFor(3);
    reserve.answered(1, answerAt(CPU, 1000, 120), 1000);
    reserve.finish(1);
    expect(reserve.tokensFor(3)).toBeGreaterThan(before);
  });

  test("re-plans the answers' length from the measured rates when a plan is given", () => {
    const run = (rates: { prefill: number; decode: number }) => {
      const plan = createTimeBudget({
        budgetMs: 5 * 60_000,
        slots: 20,
        meter: createRateMeter(CPU_PRIOR),
        promptLimit: 7600,
        answerTokens: 100,
        replanAnswer: (left) => replanAnswer({ ...left, answerReserve: 512 }),
      });
      for (let slot = 0; slot < 20; slot++) plan.want(slot, 4000);
      expect(plan.answerTokens()).toBe(100);
      plan.answered(0, answerAt(rates, 4000), 4000);
      plan.finish(0);
      return plan.answerTokens();
    };
    // A GPU far from its budget: whole answers from the second call on.
    expect(run(GPU)).toBe(512);
    // A CPU: the budget binds, the answers stay as planned.
    expect(run(CPU)).toBeLessThanOrEqual(100);
  });

  test("re-plans as answers come in: larger prompts on a fast machine, smaller on a slow one", () => {
    const fast = budget(20 * 60_000);
    const slow = budget(20 * 60_000);
    for (let slot = 0; slot < 20; slot++) {
      fast.want(slot, 7000);
      slow.want(slot, 7000);
    }
    const before = fast.tokensFor(1);
    fast.answered(1, answerAt({ prefill: 96, decode: 30 }, before), before);
    fast.finish(1);
    slow.answered(1, answerAt({ prefill: 12, decode: 6 }, before), before);
    slow.finish(1);
    expect(fast.tokensFor(3)).toBeGreaterThan(before);
    expect(slow.tokensFor(3)).toBeLessThan(before);
  });

  test("admits(): the plan's stories until an answer, then as many as fit at the measured rates", () => {
    const at = (rates: { prefill: number; decode: number }) => {
      const plan = createTimeBudget({
        budgetMs: 5 * 60_000,
        slots: 20,
        meter: createRateMeter(),
        promptLimit: 7600,
        keep: 3,
        floorAnswerTokens: 60,
      });
      for (let slot = 0; slot < 20; slot++) plan.want(slot, 3000);
      expect(plan.admits(0)).toBe(true);
      plan.tokensFor(0);
      plan.answered(0, answerAt(rates, 600, 60), 600);
      plan.finish(0);
      return plan;
    };
    // Ten times the assumed speed: every story fits now, the fourth among them.
    const fast = at({ prefill: 240, decode: 110 });
    expect(fast.admits(6)).toBe(true);
    expect(fast.admits(19)).toBe(true);
    // A tenth of it: the first call took most of the budget; the story already called is kept,
    // the next is refused, and every story after it with it.
    const slow = at({ prefill: 2.4, decode: 1.1 });
    expect(slow.admits(1)).toBe(true);
    expect(slow.admits(2)).toBe(false);
    expect(slow.admits(19)).toBe(false);
  });

  test("a call that wants little leaves its share to the others", () => {
    const plan = budget(20 * 60_000);
    for (let slot = 0; slot < 20; slot++) plan.want(slot, slot === 0 ? 600 : 7000);
    const generous = plan.tokensFor(1);
    const tight = budget(20 * 60_000);
    for (let slot = 0; slot < 20; slot++) tight.want(slot, 7000);
    expect(plan.tokensFor(0)).toBe(600);
    expect(generous).toBeGreaterThanOrEqual(tight.tokensFor(1));
  });

  test("guesses a discussion's want from its comment count, so small ones leave room at once", () => {
    expect(discussionWantGuess(7, 7600)).toBe(300 + 7 * 110);
    expect(discussionWantGuess(366, 7600)).toBe(7600);
    const informed = budget(20 * 60_000);
    const blind = budget(20 * 60_000);
    // The first story's discussion is large, stories 2..10 have a few comments each.
    informed.want(1, discussionWantGuess(366, 7600));
    blind.want(1, discussionWantGuess(366, 7600));
    for (let story = 1; story < 10; story++) {
      informed.want(story * 2 + 1, discussionWantGuess(story, 7600));
    }
    expect(informed.tokensFor(1)).toBeGreaterThan(blind.tokensFor(1));
  });

  test("learns how the server counts tokens against the estimate", () => {
    const plan = budget(20 * 60_000);
    for (let slot = 0; slot < 20; slot++) plan.want(slot, 7000);
    const before = plan.tokensFor(1);
    // The estimate said `before`, the server read a quarter less: the same time buys more.
    plan.answered(1, answerAt(CPU, Math.round(before * 0.75)), before);
    plan.finish(1);
    const sameMachine = budget(20 * 60_000);
    for (let slot = 0; slot < 20; slot++) sameMachine.want(slot, 7000);
    sameMachine.answered(1, answerAt(CPU, before), before);
    sameMachine.finish(1);
    expect(plan.tokensFor(3)).toBeGreaterThan(sameMachine.tokensFor(3));
  });

  test("plans the first calls with the expected ratio, and never shortens a timeout by it", () => {
    const withRatio = (expectedRatio?: { article: number; discussion: number }) => {
      const plan = createTimeBudget({
        budgetMs: 20 * 60_000,
        slots: 20,
        meter: createRateMeter(),
        promptLimit: 7600,
        loaded: true,
        expectedRatio,
      });
      for (let slot = 0; slot < 20; slot++) plan.want(slot, 7000);
      return plan;
    };
    const assumed = withRatio();
    const expected = withRatio({ article: 0.78, discussion: 0.78 });
    // The same time buys the same server-counted tokens: more estimated ones at 0.78.
    expect(expected.tokensFor(1) * 0.78).toBeCloseTo(assumed.tokensFor(1), -1);
    // Timeouts: 4,800 estimated tokens are taken as 4,800 counted until a ratio is measured.
    const seconds = (counted: number) => 2 * (counted / CPU.prefill + 512 / CPU.decode) + 30;
    expect(expected.timeoutMs(4800, 512)).toBe(Math.ceil(seconds(4800) * 1000));
    // Once answers measured both kinds' ratio (0.6, at the prior's own rates), it is trusted.
    expected.answered(0, answerAt(CPU, 600), 1000);
    expected.answered(1, answerAt(CPU, 600), 1000);
    expect(expected.timeoutMs(4800, 512)).toBe(Math.ceil(seconds(4800 * 0.6) * 1000));
  });

  test("never plans one call past four minutes, nor a prompt below the floor", () => {
    const plan = budget(6 * 60 * 60_000, 2);
    plan.want(0, 7000);
    plan.want(1, 7000);
    const tokens = plan.tokensFor(1);
    expect(tokens / CPU.prefill + CPU_PRIOR.answerTokens / CPU.decode).toBeLessThanOrEqual(240);
    const starved = budget(60_000);
    for (let slot = 0; slot < 20; slot++) starved.want(slot, 7000);
    expect(starved.tokensFor(0)).toBe(MIN_PROMPT_TOKENS);
  });

  test("times a call out from its expected time at the measured rates, under the ceiling", () => {
    const plan = budget(null);
    // Before any answer: the CPU prior, and a minute more in case the call loads the model.
    expect(plan.timeoutMs(4800, 512)).toBe(Math.ceil((2 * (4800 / 24 + 512 / 11) + 90) * 1000));
    const loaded = createTimeBudget({
      budgetMs: null,
      slots: 2,
      meter: createRateMeter(GPU_PRIOR),
      promptLimit: 7600,
      loaded: true,
    });
    // A model already loaded, on a GPU: no minute for loading, and the GPU prior's rates.
    expect(loaded.timeoutMs(4800, 512)).toBe(
      Math.ceil(
        (2 * (4800 / GPU_PRIOR.prefillPerSecond + 512 / GPU_PRIOR.decodePerSecond) + 30) * 1000,
      ),
    );
    plan.answered(1, answerAt(GPU, 4000), 4000);
    expect(plan.timeoutMs(4800, 512)).toBeLessThan(60_000);
    expect(plan.timeoutMs(4800, 512)).toBeGreaterThanOrEqual(30_000);
    const slowMachine = budget(null);
    slowMachine.answered(1, answerAt({ prefill: 10, decode: 4 }, 4000), 4000);
    // A big prompt on a slow machine gets far more than the old fixed 300 s...
    expect(slowMachine.timeoutMs(7000, 512)).toBeGreaterThan(2 * 700_000);
    // ...unless OLLAMA_TIMEOUT_MS caps it.
    const capped = budget(null, 20, 300_000);
    capped.answered(1, answerAt({ prefill: 10, decode: 4 }, 4000), 4000);
    expect(capped.timeoutMs(7000, 512)).toBe(300_000);
  });

  test("tells the time left once an answer has been measured", () => {
    const plan = budget(20 * 60_000, 4);
    for (let slot = 0; slot < 4; slot++) plan.want(slot, 2400);
    expect(plan.leftMs()).toBeNull();
    plan.answered(1, answerAt(CPU, 2400), 2400);
    plan.finish(0);
    const left = plan.leftMs() ?? 0;
    // Three calls of about 2,400 tokens at 24 tokens/s and 150-odd answer tokens at 11.
    expect(left).toBeGreaterThan(3 * 110_000);
    expect(left).toBeLessThan(3 * 140_000);
  });
});
