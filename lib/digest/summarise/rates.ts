import type { ModelAnswer } from "./models/model-client.ts";

/** How fast the machine reads prompts and writes answers, and how long answers run. */
export interface MachineRates {
  prefillPerSecond: number;
  decodePerSecond: number;
  /** Tokens an answer takes, on average. */
  answerTokens: number;
}

/**
 * What the digest assumes before the first answer: llama3.2 3B on a laptop CPU (the i3-1315U's
 * published llama.cpp figures, 24 / 11 tokens/s) and a summary of about 200 tokens. Slow on
 * purpose: on a GPU the first answer corrects it within one call, while a fast guess on a CPU
 * would size the first prompt (and its timeout) for a machine ten times quicker.
 */
export const CPU_PRIOR: MachineRates = {
  prefillPerSecond: 24,
  decodePerSecond: 11,
  answerTokens: 200,
};

/**
 * The prior when the model sits wholly in a GPU's memory: a tenth of what a GPU is published to
 * reach with a 3B model (an RTX 4090: about 20,000 / 200) and below what a modest one does, so a
 * first call to a hung server is given up on within two minutes, and a time budget such a run
 * never approaches does not shrink its first prompts (it did at 300 / 20).
 */
export const GPU_PRIOR: MachineRates = {
  prefillPerSecond: 2000,
  decodePerSecond: 50,
  answerTokens: 200,
};

/**
 * A prompt read this many times faster than measured so far was mostly not read: Ollama counts a
 * prefix it had cached in prompt_eval_count but times only the rest in prompt_eval_duration, so
 * such an answer says nothing of the prefill rate (a shared instruction of a few percent of the
 * prompt stays far below this, and is counted).
 */
export const CACHED_PREFIX_FACTOR = 4;

export interface RateMeter {
  /** Learns from one answer: its counts and durations, or its wall time when they are missing. */
  record(answer: ModelAnswer): void;
  /** The rates as measured so far; the prior's until an answer says. */
  rates(): MachineRates;
  /** Answers measured. */
  readonly answers: number;
}

/**
 * The machine's rates learnt from the answers, as totals (tokens over seconds), so a long prompt
 * counts for more than a short one; the prior stands only until the first answer measures it.
 * A server that reports token counts but no durations (most OpenAI-compatible ones) is measured
 * by its wall time: the call is taken as the current rates scaled by how much longer or shorter
 * it really took. A prompt read implausibly fast (CACHED_PREFIX_FACTOR) is left out of prefill.
 */
export function createRateMeter(prior: MachineRates = CPU_PRIOR): RateMeter {
  let promptTokens = 0;
  let promptSeconds = 0;
  let answerTokens = 0;
  let answerSeconds = 0;
  let answerCount = 0;
  let answerTokensSum = 0;
  let answers = 0;
  const meter: RateMeter = {
    get answers() {
      return answers;
    },
    record(answer) {
      const current = meter.rates();
      const read = answer.promptTokens ?? 0;
      const written = answer.answerTokens ?? current.answerTokens;
      const { promptMs, answerMs, wallMs } = answer.timings;
      if (promptMs !== null && answerMs !== null) {
        const mostlyCached =
          promptSeconds > 0 &&
          read / (promptMs / 1000) > CACHED_PREFIX_FACTOR * current.prefillPerSecond;
        if (read > 0 && promptMs > 0 && !mostlyCached) {
          promptTokens += read;
          promptSeconds += promptMs / 1000;
        }
        if (written > 0 && answerMs > 0) {
          answerTokens += written;
          answerSeconds += answerMs / 1000;
        }
      } else if (read > 0 && wallMs > 0) {
        const expected = read / current.prefillPerSecond + written / current.decodePerSecond;
        const scale = wallMs / 1000 / expected;
        promptTokens += read;
        promptSeconds += (read / current.prefillPerSecond) * scale;
        answerTokens += written;
        answerSeconds += (written / current.decodePerSecond) * scale;
      }
      if (answer.answerTokens !== null) {
        answerCount++;
        answerTokensSum += answer.answerTokens;
      }
      answers++;
    },
    rates() {
      return {
        prefillPerSecond: promptSeconds > 0 ? promptTokens / promptSeconds : prior.prefillPerSecond,
        decodePerSecond: answerSeconds > 0 ? answerTokens / answerSeconds : prior.decodePerSecond,
        answerTokens: answerCount > 0 ? answerTokensSum / answerCount : prior.answerTokens,
      };
    },
  };
  return meter;
}

/** Seconds a call of `promptTokens` and `answerTokens` takes at `rates`. */
export function callSeconds(
  rates: MachineRates,
  promptTokens: number,
  answerTokens = rates.answerTokens,
): number {
  return promptTokens / rates.prefillPerSecond + answerTokens / rates.decodePerSecond;
}
