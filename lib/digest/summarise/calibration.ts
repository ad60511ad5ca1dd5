/**
 * The token estimate calibrated per model. tokens.ts errs high for any model (3.5 ASCII
 * characters a token; Llama 3 reads about 4.5 in English prose), leaving a fifth of each window
 * empty. Each answer says how many tokens the model's own tokenizer counted (Ollama's
 * prompt_eval_count, the prompt's whole length even when a cached prefix was not re-read); the
 * cache keeps the recent ones per model and kind of prompt (a discussion's author headers
 * tokenize differently from an article's prose), and the scale is the highest ratio among them
 * with a small margin, so the prompts that tokenize worst still fit and the others fill the window.
 */

/** Prompts shorter than this say more about the template than about the tokenizer. */
export const MIN_SAMPLE_TOKENS = 200;
/** Added to the highest ratio seen: content varies more than the samples show. */
const MARGIN = 0.03;
/** A ratio outside this range is a server reporting something else (a cut prompt, no count). */
const PLAUSIBLE = { min: 0.4, max: 2.5 } as const;

export interface TokenSample {
  kind: "article" | "discussion";
  /** Tokens tokens.ts estimated for the prompt (scale 1). */
  estimated: number;
  /** Tokens the model counted for it. */
  counted: number;
}

/**
 * What the model is taken to count per estimated token before it has answered a long prompt, when
 * the time budget plans the first calls: the estimate errs high on purpose (3.5 characters a
 * token) and Llama 3, the default model's tokenizer, reads about 4.5 in English prose. Taking 1
 * instead gave the first call, the top story's discussion, the smallest prompt of the run.
 */
export const UNCALIBRATED_RATIO = 0.78;

/**
 * The scale to multiply estimates by for this model and kind of prompt (the other kind's samples
 * when this kind has none yet); 1 until the model has answered a long prompt.
 */
export function tokenScale(samples: readonly TokenSample[], kind: TokenSample["kind"]): number {
  const highest = highestRatio(samples, kind);
  return highest === null ? 1 : Math.min(PLAUSIBLE.max, highest + MARGIN);
}

/** The highest plausible ratio of counted to estimated tokens; null without usable samples. */
function highestRatio(samples: readonly TokenSample[], kind: TokenSample["kind"]): number | null {
  const own = samples.filter((sample) => sample.kind === kind);
  let highest: number | null = null;
  for (const sample of own.length > 0 ? own : samples) {
    if (sample.estimated < MIN_SAMPLE_TOKENS) continue;
    const ratio = sample.counted / sample.estimated;
    if (ratio >= PLAUSIBLE.min && ratio <= PLAUSIBLE.max) highest = Math.max(highest ?? 0, ratio);
  }
  return highest;
}

/**
 * Whether an answer's count can calibrate: the prompt long enough, and not cut by the window
 * (a count at the window's edge is the window, not the prompt).
 */
export function usableSample(sample: TokenSample, numCtx: number): boolean {
  return sample.estimated >= MIN_SAMPLE_TOKENS && sample.counted < numCtx * 0.98;
}

/**
 * A run's calibration, from the samples earlier runs left in the cache (this run's answers are
 * kept for the next). It stays fixed for the run: prompts then do not depend on the order in
 * which answers happen to come back, and a run is the same however its fetches race.
 */
export interface Calibration {
  /** The scale for a kind of prompt (see tokenScale). */
  scale(kind: TokenSample["kind"]): number;
  /**
   * Tokens the model is expected to count per token estimated at that scale, until this run's
   * answers say: about 1 once calibrated (the margin errs high), UNCALIBRATED_RATIO before.
   */
  expectedRatio(kind: TokenSample["kind"]): number;
}

export function createCalibration(samples: readonly TokenSample[] = []): Calibration {
  const scales = {
    article: tokenScale(samples, "article"),
    discussion: tokenScale(samples, "discussion"),
  };
  const expected = (kind: TokenSample["kind"]) =>
    highestRatio(samples, kind) === null ? UNCALIBRATED_RATIO : 1;
  const ratios = { article: expected("article"), discussion: expected("discussion") };
  return { scale: (kind) => scales[kind], expectedRatio: (kind) => ratios[kind] };
}
