import { UsageError } from "../../config/errors.ts";
import { CALL_OVERHEAD_SECONDS, MIN_PROMPT_TOKENS, SAFETY } from "./budget.ts";
import { callSeconds, type MachineRates } from "./rates.ts";

/**
 * Answers under a budget that binds: about 100 tokens (60 words), 9 s on a CPU writing 11 a
 * second, against the 150 to 200 a summary takes unasked (a quarter of a CPU run's time).
 */
export const BUDGET_ANSWER_TOKENS = 100;
/** The shortest answer worth asking for: two or three sentences. */
export const MIN_ANSWER_TOKENS = 60;

/** What a budget allows before the first call, at the rates assumed until an answer says. */
export interface BudgetPlan {
  /** Stories needing the model that fit, in front-page order (all of them without a budget). */
  stories: number;
  /** Tokens each answer may take (num_predict / max_tokens). */
  answerTokens: number;
  /** One line saying what the budget cut beyond the comments and the article, or null. */
  cut: string | null;
}

export interface PlanInput {
  /** Model time the run may take (ms); null: none. */
  budgetMs: number | null;
  /** Stories whose summaries need the model (the cache holds the others'). */
  stories: number;
  /** The rates assumed until the first answer measures them. */
  rates: MachineRates;
  /** Tokens the server is expected to count per estimated one. */
  ratio: number;
  /** Model time already spent (loading the model), ms. */
  spentMs: number;
  /** The most tokens a prompt may take in the window (promptLimit). */
  promptLimit: number;
  /** The answer's room in the window (answerReserve): the answer length without a budget. */
  answerReserve: number;
  /**
   * Tokens the answers' language takes per English token (language-tokens.ts): answers under a
   * budget are that much longer in tokens, the same in words; default 1.
   */
  answerRatio?: number;
}

/** BUDGET_ANSWER_TOKENS and MIN_ANSWER_TOKENS in the answers' language, within the reserve. */
function answerBounds(reserve: number, ratio = 1): { budget: number; min: number } {
  return {
    budget: Math.min(reserve, Math.ceil(BUDGET_ANSWER_TOKENS * ratio)),
    min: Math.min(reserve, Math.ceil(MIN_ANSWER_TOKENS * ratio)),
  };
}

/** The shortest answer a kept story is planned at (MIN_ANSWER_TOKENS in the answers' language). */
export function minAnswerTokens(reserve: number, ratio = 1): number {
  return answerBounds(reserve, ratio).min;
}

/**
 * How a budget is kept, decided before any model call: prompts shrink first (the time budget
 * shares what is left among the calls, down to MIN_PROMPT_TOKENS), then answers (from
 * BUDGET_ANSWER_TOKENS down to MIN_ANSWER_TOKENS), then the last stories are left out. Throws
 * UsageError when not even one story fits.
 */
export function planBudget(input: PlanInput): BudgetPlan {
  const { budgetMs, stories, rates, ratio } = input;
  const whole = { stories, answerTokens: input.answerReserve, cut: null };
  if (budgetMs === null || stories === 0) return whole;
  const seconds = (budgetMs * (1 - SAFETY) - input.spentMs) / 1000;
  const call = (promptTokens: number, answerTokens: number) =>
    callSeconds(rates, promptTokens * ratio, answerTokens) + CALL_OVERHEAD_SECONDS;
  // A budget that buys every call its whole window and an answer of the length models give
  // (the prior's, not the reserve: answers seldom fill it) does not bind.
  const given = Math.min(input.answerReserve, rates.answerTokens);
  if (seconds >= 2 * stories * call(input.promptLimit, given)) return whole;
  const bounds = answerBounds(input.answerReserve, input.answerRatio);
  const answer = bounds.budget;
  if (seconds >= 2 * stories * call(MIN_PROMPT_TOKENS, answer)) {
    return { stories, answerTokens: answer, cut: null };
  }
  const said = `The ${minutes(budgetMs)} budget at ${rateText(rates)}`;
  // The answer that fits every story with its prompts at their floor.
  const perCall = seconds / (2 * stories) - call(MIN_PROMPT_TOKENS, 0);
  const shorter = Math.floor(perCall * rates.decodePerSecond);
  if (shorter >= bounds.min) {
    return {
      stories,
      answerTokens: shorter,
      cut: `${said} keeps every story with prompts at their smallest and answers of ${shorter} tokens`,
    };
  }
  const perStory = 2 * call(MIN_PROMPT_TOKENS, bounds.min);
  const fit = Math.floor(seconds / perStory);
  if (fit < 1) {
    const needed = Math.ceil((perStory * 1000 + input.spentMs) / (1 - SAFETY) / 60_000);
    throw new UsageError(
      `Time budget too short for even one story: ${minutes(budgetMs)} at ${rateText(rates)}, where one story's two summaries at their smallest take about ${Math.round(perStory)} s; give --time-budget ${needed}m or more (0 for none)`,
    );
  }
  const left = stories - fit;
  return {
    stories: fit,
    answerTokens: bounds.min,
    cut: `${said} keeps ${fit} of ${stories} stories with prompts at their smallest and answers of ${bounds.min} tokens; the last ${left === 1 ? "story is" : `${left} are`} left out unless answers show a faster machine`,
  };
}

/** The calls still to come, as the time budget sees them once answers have measured the machine. */
export interface AnswerReplan {
  /** Model time left for them (s). */
  seconds: number;
  /** Each call's whole prompt, in tokens as the server counts them. */
  prompts: readonly number[];
  /** The rates as measured. */
  rates: MachineRates;
  /** The window's room for the answer: the length when the budget does not bind. */
  answerReserve: number;
  /** Tokens the answers' language takes per English token; default 1. */
  answerRatio?: number;
}

/**
 * The answer length (num_predict) for the calls still to come, re-made from the measured rates
 * by planBudget's rules (whole answers when every call's whole window and its answer fit, then
 * BUDGET_ANSWER_TOKENS, then shorter, never below MIN_ANSWER_TOKENS), in steps of 10 tokens so
 * the instruction, which says the length, stays the same from call to call (Ollama's prefix
 * cache); in the answers' language's tokens. A GPU whose first answer shows the budget far off gets whole answers from then on.
 */
export function replanAnswer(input: AnswerReplan): number {
  const { seconds, prompts, rates } = input;
  const calls = prompts.length;
  const given = Math.min(input.answerReserve, rates.answerTokens);
  const whole = prompts.reduce(
    (sum, tokens) => sum + callSeconds(rates, tokens, given) + CALL_OVERHEAD_SECONDS,
    0,
  );
  if (calls === 0 || seconds >= whole) return input.answerReserve;
  const floorCall = callSeconds(rates, MIN_PROMPT_TOKENS, 0) + CALL_OVERHEAD_SECONDS;
  const bounds = answerBounds(input.answerReserve, input.answerRatio);
  const shorter = Math.floor((seconds / calls - floorCall) * rates.decodePerSecond);
  return Math.max(bounds.min, Math.min(bounds.budget, 10 * Math.floor(shorter / 10)));
}

function minutes(ms: number): string {
  if (ms < 60_000) return `${Math.round(ms / 1000)} s`;
  const value = ms / 60_000;
  return `${Number.isInteger(value) ? value : value.toFixed(1)} min`;
}

function rateText(rates: MachineRates): string {
  const round = (n: number) => (n >= 100 ? Math.round(n) : Number(n.toFixed(1)));
  return `${round(rates.prefillPerSecond)}/${round(rates.decodePerSecond)} tokens/s (assumed until the first answer)`;
}
