import type { MachineInfo, ModelAnswer } from "./models/model-client.ts";
import { callSeconds, type MachineRates, type RateMeter } from "./rates.ts";
import { createStoryKeeper } from "./story-keeper.ts";

/** The default budget on a machine without a GPU for the whole model; a GPU needs none. */
export const CPU_DEFAULT_BUDGET_MS = 20 * 60_000;
/** Part of the budget kept back: rates and answer lengths vary from call to call. */
export const SAFETY = 0.03;
/** No single call is planned longer than this, so one prompt cannot eat the run. */
const MAX_CALL_SECONDS = 240;
/** Time a call costs besides reading and writing (the request, the template), in seconds. */
export const CALL_OVERHEAD_SECONDS = 0.5;
/**
 * The smallest prompt worth sending: the instruction and a few short comments or a paragraph or
 * two (as estimated; Llama 3 counts about a fifth less).
 */
export const MIN_PROMPT_TOKENS = 400;
/** The answer's length (num_predict) when the options name none: the window's reserve. */
const DEFAULT_ANSWER_TOKENS = 512;
/** A discussion gets this much more room than an article: its worth is spread over many voices. */
const DISCUSSION_WEIGHT = 1.25;

/** Tokens a comment takes in a discussion prompt, about (400 characters and its header). */
const TOKENS_PER_COMMENT = 110;
/** The discussion prompt's instruction, title and counts. */
const DISCUSSION_FRAME_TOKENS = 300;

/**
 * What a discussion of `comments` comments will want, guessed from the front page alone, so the
 * first calls are planned knowing which stories have a small discussion (the real want replaces
 * it once the comments are read).
 */
export function discussionWantGuess(comments: number, promptLimit: number): number {
  return Math.min(promptLimit, DISCUSSION_FRAME_TOKENS + comments * TOKENS_PER_COMMENT);
}

/**
 * The run's budget (ms), or null for none: `--time-budget` when given (0 = none); otherwise 20
 * minutes unless the model sits wholly in a GPU's memory. A server that cannot tell where the
 * model runs is taken for a CPU: a budget costs a fast machine little, since its prompts fit.
 */
export function budgetFor(given: number | undefined, machine: MachineInfo | null): number | null {
  if (given !== undefined) return given === 0 ? null : given;
  return machine?.placement === "gpu" ? null : CPU_DEFAULT_BUDGET_MS;
}

export interface TimeBudgetOptions {
  /** Model time the run may take (ms); null: none, every prompt gets its whole window. */
  budgetMs: number | null;
  /** Calls the run may make: slot 2i is story i's article, 2i + 1 its discussion. */
  slots: number;
  meter: RateMeter;
  /** The most tokens a prompt may take in the context window. */
  promptLimit: number;
  /** OLLAMA_TIMEOUT_MS when set: no call waits longer. */
  timeoutCeilingMs?: number;
  /** Model time spent before the first prompt (loading the model), ms. */
  spentMs?: number;
  /** The model was loaded before the first prompt: its timeout needs no room for a load. */
  loaded?: boolean;
  /**
   * Tokens the server is expected to count per estimated token, per kind, until its answers say
   * (Calibration.expectedRatio); default 1.
   */
  expectedRatio?: { article: number; discussion: number };
  /** Tokens each answer may take (num_predict), from the plan (budget-plan.ts); default 512. */
  answerTokens?: number;
  /**
   * Stories (the first ones) the plan keeps until an answer measures the machine (budget-plan.ts);
   * default every one. From the first answer on, which stories fit is re-made at the measured rates.
   */
  keep?: number;
  /** The shortest answer a kept story is planned at (MIN_ANSWER_TOKENS in the answers' language). */
  floorAnswerTokens?: number;
  /**
   * Re-makes the answers' length once answers have measured the machine (budget-plan.ts's
   * replanAnswer); absent: the planned length throughout.
   */
  replanAnswer?: (left: {
    seconds: number;
    prompts: readonly number[];
    rates: MachineRates;
  }) => number;
}

export interface TimeBudget {
  readonly budgetMs: number | null;
  /** The call in `slot` would take `tokens` with its whole window (what it wants). */
  want(slot: number, tokens: number): void;
  /**
   * Tokens the next answer may take (num_predict): as planned for the budget before the first
   * answer, then re-planned at the measured rates for the calls still to come.
   */
  answerTokens(): number;
  /**
   * Whether the story of `slot` may make its call now, asked when the call's turn comes: a story
   * already called is kept; another only while it fits at its prompts' floor and the shortest
   * answers after the stories before it (the first `keep` until an answer measures the machine).
   * A story refused is left out with every story after it, its slots finished.
   */
  admits(slot: number): boolean;
  /** The slot will make no (further) call: answered, failed, cached or nothing to summarise. */
  finish(slot: number): void;
  /**
   * The slot's summary was reused from an earlier run. Once both halves of a story are reused
   * (or the other has nothing to summarise), the story's share of the budget is not handed to
   * the other calls, so a re-run that reuses most of the work costs that much less; a story
   * with a half still for the model keeps its whole share for that half.
   */
  reused(slot: number): void;
  /** Tokens the prompt in `slot` may take now, planned over every call still to come. */
  tokensFor(slot: number): number;
  /** The call's timeout: its expected time at the measured rates, doubled, plus half a minute. */
  timeoutMs(promptTokens: number, numPredict: number): number;
  /**
   * Learns from an answer and counts its time as spent. `estimatedTokens` is what the prompt was
   * sized as: the plan learns how the server's count compares, so it buys whole windows of real
   * tokens, whatever the estimate's error.
   */
  answered(slot: number, answer: ModelAnswer, estimatedTokens: number): void;
  /** Counts a failed call's time as spent. */
  failed(wallMs: number): void;
  /**
   * Model time the calls still to come are expected to take, as now planned (each at least its
   * floor, whatever the budget has left); null before the first answer.
   */
  leftMs(): number | null;
}

/**
 * Plans the prompts of a run so its model time fits a budget. Before each call it shares the
 * prompt tokens the remaining time buys at the measured rates among every call still to come
 * (water-filling: a call that wants less than its share leaves the rest to the others, a
 * discussion weighs 1.25 articles), so the plan is re-made as answers teach the machine's speed.
 */
export function createTimeBudget(options: TimeBudgetOptions): TimeBudget {
  const { budgetMs, meter, promptLimit } = options;
  const wants = new Map<number, number>();
  const finished = new Set<number>();
  const weightOf = (slot: number) => (slot % 2 === 1 ? DISCUSSION_WEIGHT : 1);
  const totalWeight = Array.from({ length: options.slots }, (_, slot) => weightOf(slot)).reduce(
    (sum, weight) => sum + weight,
    0,
  );
  // Model time set aside for stories the cache answered wholly (ms).
  let reusedMs = 0;
  const reusedSlots = new Set<number>();
  // Slots whose call's turn came: a story with one of them is not wholly answered by the cache.
  const called = new Set<number>();
  const shareMs = (slot: number) =>
    budgetMs === null ? 0 : (budgetMs * weightOf(slot)) / totalWeight;
  const sibling = (slot: number) => slot ^ 1;
  const noCall = (slot: number) => finished.has(slot) && !called.has(slot);
  let spentMs = options.spentMs ?? 0;
  const ratios = createTokenRatios(options.expectedRatio);
  const ratioOf = ratios.of;
  const pending = () =>
    Array.from({ length: options.slots }, (_, slot) => slot).filter((s) => !finished.has(s));
  // A slot whose want is not known yet is taken to want what others of its kind do.
  const typicalWant = (slot: number) => {
    const known = [...wants.entries()].filter(([s]) => s % 2 === slot % 2 && !finished.has(s));
    if (known.length === 0) return promptLimit;
    return known.reduce((sum, [, tokens]) => sum + tokens, 0) / known.length;
  };
  const wantOf = (slot: number) => Math.min(wants.get(slot) ?? typicalWant(slot), promptLimit);
  // Answers are as long as the model makes them, as measured (the prior's realistic length until
  // the first answer), never longer than the plan allows (num_predict): reserving the cap for
  // every call before the first answer left most of a budget unused.
  let answerCap = options.answerTokens ?? DEFAULT_ANSWER_TOKENS;
  const answerLength = () => Math.min(answerCap, meter.rates().answerTokens);
  const fixedSeconds = () => answerLength() / meter.rates().decodePerSecond + CALL_OVERHEAD_SECONDS;
  const secondsLeft = () =>
    budgetMs === null ? 0 : ((budgetMs - reusedMs) * (1 - SAFETY) - spentMs) / 1000;
  // A story's calls still to come at their prompts' floor and the shortest answers.
  const floorSeconds = (story: number) => {
    const rates = meter.rates();
    const answer = Math.min(answerLength(), options.floorAnswerTokens ?? answerLength());
    return [2 * story, 2 * story + 1]
      .filter((slot) => slot < options.slots && !finished.has(slot))
      .reduce((sum, slot) => {
        const prompt = Math.min(wantOf(slot), MIN_PROMPT_TOKENS) * ratioOf(slot);
        return sum + callSeconds(rates, prompt, answer) + CALL_OVERHEAD_SECONDS;
      }, 0);
  };
  const keeper = createStoryKeeper({
    stories: Math.ceil(options.slots / 2),
    keep: options.keep,
    measured: () => meter.answers > 0,
    secondsLeft,
    floorSeconds,
  });
  /** The slots still to call of the stories the plan keeps now. */
  const openKept = () => {
    if (budgetMs === null) return pending();
    const kept = keeper.kept();
    return pending().filter((slot) => Math.floor(slot / 2) < kept);
  };
  // The safety share is of the whole budget, so it is still there for the last calls.
  const planned = (open: readonly number[]): Map<number, number> =>
    budgetMs === null
      ? new Map(open.map((slot) => [slot, wantOf(slot)]))
      : plannedTokens(open, {
          seconds: secondsLeft() - open.length * fixedSeconds(),
          callSeconds: MAX_CALL_SECONDS - fixedSeconds(),
          prefillPerSecond: meter.rates().prefillPerSecond,
          wantOf,
          ratioOf,
          weightOf,
        });
  return {
    budgetMs,
    want(slot, tokens) {
      wants.set(slot, tokens);
    },
    admits(slot) {
      if (budgetMs === null || keeper.admits(Math.floor(slot / 2))) return true;
      // Left out, with every story after it: their calls are not planned for.
      for (let later = slot - (slot % 2); later < options.slots; later++) finished.add(later);
      return false;
    },
    finish(slot) {
      if (finished.has(slot)) return;
      finished.add(slot);
      // Nothing to summarise beside a reused half: the story needed no model call at all.
      if (!called.has(slot) && reusedSlots.has(sibling(slot))) reusedMs += shareMs(sibling(slot));
    },
    reused(slot) {
      if (finished.has(slot)) return;
      finished.add(slot);
      reusedSlots.add(slot);
      // Only a story the cache answers wholly gives its share back; a story whose other half
      // goes to the model (yesterday's article, a discussion grown since) lends it this one's.
      const other = sibling(slot);
      if (reusedSlots.has(other)) reusedMs += shareMs(slot) + shareMs(other);
      else if (noCall(other)) reusedMs += shareMs(slot);
    },
    tokensFor(slot) {
      called.add(slot);
      const open = openKept();
      if (!open.includes(slot)) open.push(slot);
      return planned(open).get(slot) ?? wantOf(slot);
    },
    answerTokens() {
      if (budgetMs === null || meter.answers === 0 || !options.replanAnswer) return answerCap;
      const open = openKept();
      answerCap = options.replanAnswer({
        seconds: secondsLeft(),
        prompts: open.map((slot) => wantOf(slot) * ratioOf(slot)),
        rates: meter.rates(),
      });
      return answerCap;
    },
    timeoutMs(promptTokens, numPredict) {
      const counted = promptTokens * ratios.forTimeout();
      const expected = callSeconds(meter.rates(), counted, numPredict);
      // The first call may also load the model, when the server could not be asked to first.
      const firstCall = meter.answers === 0 && !options.loaded ? 60 : 0;
      const timeout = Math.ceil((2 * expected + 30 + firstCall) * 1000);
      return Math.min(timeout, options.timeoutCeilingMs ?? Number.POSITIVE_INFINITY);
    },
    answered(slot, answer, estimatedTokens) {
      meter.record(answer);
      ratios.learn(slot, answer.promptTokens, estimatedTokens);
      const { promptMs, answerMs, loadMs, wallMs } = answer.timings;
      spentMs += Math.max(wallMs, (promptMs ?? 0) + (answerMs ?? 0) + (loadMs ?? 0));
    },
    failed(wallMs) {
      spentMs += wallMs;
    },
    leftMs() {
      if (meter.answers === 0) return null;
      const now = meter.rates();
      // What the calls still to come will take as planned now: never less than their floor, so
      // a run over its budget says how long it still has, not "nothing left".
      let seconds = 0;
      for (const [slot, tokens] of planned(openKept())) {
        seconds += callSeconds(now, tokens * ratioOf(slot), answerLength()) + CALL_OVERHEAD_SECONDS;
      }
      return 1000 * seconds;
    },
  };
}

/**
 * Server-counted prompt tokens per estimated one, for articles (even slots) and discussions
 * (odd), the expected ratio until an answer says. Recent answers weigh most: the estimate itself
 * is recalibrated between runs (calibration.ts), so an old ratio would correct a corrected error.
 */
function createTokenRatios(expected = { article: 1, discussion: 1 }) {
  const ratios = [expected.article, expected.discussion];
  const known = [false, false];
  const of = (slot: number) => ratios[slot % 2] ?? 1;
  return {
    of,
    /** The larger kind's; a ratio only expected, not yet measured, is not trusted below 1. */
    forTimeout: () =>
      Math.max(...[0, 1].map((kind) => (known[kind] ? of(kind) : Math.max(1, of(kind))))),
    learn(slot: number, counted: number | null, estimated: number) {
      if (counted === null || counted <= 0 || estimated <= 0) return;
      const kind = slot % 2;
      ratios[kind] = known[kind] ? (of(kind) + counted / estimated) / 2 : counted / estimated;
      known[kind] = true;
    },
  };
}

/**
 * The tokens (as estimated) each of `open` gets now: `seconds` of reading shared among them in
 * tokens as the server counts them (what takes time), none over `callSeconds`, then told back as
 * estimated; never below MIN_PROMPT_TOKENS unless a call wants less.
 */
function plannedTokens(
  open: readonly number[],
  at: {
    seconds: number;
    callSeconds: number;
    prefillPerSecond: number;
    wantOf: (slot: number) => number;
    ratioOf: (slot: number) => number;
    weightOf: (slot: number) => number;
  },
): Map<number, number> {
  const { wantOf, ratioOf } = at;
  const perCall = Math.max(0, at.callSeconds * at.prefillPerSecond);
  const shares = waterFill(
    Math.max(0, at.seconds * at.prefillPerSecond),
    open.map((s) => ({
      key: s,
      cap: Math.min(wantOf(s) * ratioOf(s), perCall),
      weight: at.weightOf(s),
    })),
  );
  const plan = new Map<number, number>();
  for (const slot of open) {
    const want = wantOf(slot);
    const share = (shares.get(slot) ?? 0) / ratioOf(slot);
    // No rounding to steps: the cache reuses a summary whatever its prompt's size (reuse.ts).
    plan.set(
      slot,
      share >= want ? want : Math.min(want, Math.max(MIN_PROMPT_TOKENS, Math.floor(share))),
    );
  }
  return plan;
}

/**
 * Shares `total` among items in proportion to their weight, none above its cap; what a capped
 * item leaves goes to the others.
 */
export function waterFill(
  total: number,
  items: readonly { key: number; cap: number; weight: number }[],
): Map<number, number> {
  const shares = new Map<number, number>();
  const sorted = [...items].sort((a, b) => a.cap / a.weight - b.cap / b.weight);
  let left = total;
  let weight = sorted.reduce((sum, item) => sum + item.weight, 0);
  for (const item of sorted) {
    const level = weight > 0 ? left / weight : 0;
    const share = Math.min(item.cap, level * item.weight);
    shares.set(item.key, share);
    left -= share;
    weight -= item.weight;
  }
  return shares;
}
