/**
 * What a digest run settles before its first story: the model server checked and the window
 * asked of it, the front page read while the server says where the model runs, and the time
 * budget that follows from it.
 */
import type { Logger } from "../log.ts";
import { USER_AGENT } from "../version.ts";
import type { DigestConfig } from "./config.ts";
import { type Edition, readEdition } from "./fetch/front-pages.ts";
import type { RetryPolicy } from "./fetch/search-fetch.ts";
import type { CatchUpWindow, StorySource } from "./fetch/source.ts";
import { storyFilter } from "./reader-config.ts";
import { budgetFor, createTimeBudget, type TimeBudget } from "./summarise/budget.ts";
import { minAnswerTokens, planBudget, replanAnswer } from "./summarise/budget-plan.ts";
import type { Calibration } from "./summarise/calibration.ts";
import { tokensVsEnglish } from "./summarise/language-tokens.ts";
import { MODEL_APIS } from "./summarise/models/apis.ts";
import type { MachineInfo, ModelClient, ModelInfo } from "./summarise/models/model-client.ts";
import { answerReserve, promptLimit } from "./summarise/prompt.ts";
import { CPU_PRIOR, createRateMeter, GPU_PRIOR } from "./summarise/rates.ts";
import type { SourceName, Story } from "./types.ts";

/**
 * The model server checked (PreflightError when unusable) and the window the run asks for; the
 * model the server chose, said when none was named.
 */
export async function checkModel(
  config: Pick<DigestConfig, "api" | "server" | "numCtx">,
  model: ModelClient,
  signal: AbortSignal | undefined,
  logger: Logger,
): Promise<{ facts: ModelInfo; numCtx: number }> {
  const facts = await model.preflight(signal);
  if (config.server.model === undefined) {
    logger.info(
      `Summaries by ${facts.model}, the first model ${model.describe} lists (choose another with --model / ${MODEL_APIS[config.api].model.env})`,
    );
  }
  return { facts, numCtx: contextWindow(config.numCtx, facts.contextLength, facts.model, logger) };
}

/**
 * The front page of each source (or a catch-up's best stories of the window), filtered
 * (--min-points, --skip…: one line says what was left out), and meanwhile where the model runs
 * (asking may load it): null when the server cannot tell. A front page that cannot be read stops
 * the question too: the run ends at once, not after a model load of up to two minutes.
 */
export async function frontPageAndMachine(
  config: DigestConfig,
  model: ModelClient,
  numCtx: number,
  deps: {
    fetch: typeof fetch;
    now: () => number;
    logger: Logger;
    sleep?: (ms: number) => Promise<void>;
    retryPolicy?: RetryPolicy;
    signal?: AbortSignal;
    sources: ReadonlyMap<SourceName, StorySource>;
    /** A catch-up edition's window and the stories to leave out (an archive's). */
    catchUp?: { window: CatchUpWindow; exclude: (story: Story) => boolean };
  },
): Promise<{ front: Edition; machine: MachineInfo | null }> {
  const frontFailed = new AbortController();
  const signal = deps.signal
    ? AbortSignal.any([deps.signal, frontFailed.signal])
    : frontFailed.signal;
  const [machine, front] = await Promise.allSettled([
    model.machine?.({ numCtx, signal }) ?? Promise.resolve(null),
    readEdition(
      deps.sources,
      {
        limit: config.limit,
        filter: storyFilter(config),
        catchUp: deps.catchUp?.window,
        exclude: deps.catchUp?.exclude,
      },
      {
        fetch: deps.fetch,
        timeoutMs: config.searchTimeoutMs,
        userAgent: USER_AGENT,
        sleep: deps.sleep,
        policy: deps.retryPolicy,
        now: deps.now,
        logger: deps.logger,
        signal: deps.signal,
      },
    ).catch((error: unknown) => {
      frontFailed.abort();
      throw error;
    }),
  ]);
  if (front.status === "rejected") throw front.reason;
  // Filtered in readEdition, before any story's article, comments or summaries are asked for.
  for (const line of front.value.warnings) deps.logger.warn(line);
  for (const line of front.value.lines) deps.logger.info(line);
  if (deps.catchUp) {
    const { from, minPoints } = deps.catchUp.window;
    const skipped = front.value.excluded;
    deps.logger.info(
      `Catch-up since ${new Date(from * 1000).toISOString().slice(0, 16).replace("T", " ")} UTC: ${front.value.stories.length} stories over ${minPoints} points${skipped > 0 ? `, ${skipped} left out as the archive summarised them already` : ""}`,
    );
  }
  return {
    front: front.value,
    machine: machine.status === "fulfilled" ? machine.value : null,
  };
}

/**
 * The run's time budget, said in one line when it was chosen for the reader (a model on the CPU),
 * and how it is kept (budget-plan.ts): the answers' length, and how many of the front page's
 * stories fit at the assumed rates (the first ones, re-planned as answers measure the machine),
 * with one line when it cuts answers or stories. Throws UsageError, before any model call, when
 * not even one story fits.
 */
export function startBudget(
  config: DigestConfig,
  run: {
    model: string;
    machine: MachineInfo | null;
    numCtx: number;
    /** The front page's stories, and which of them the cache answers (no model call). */
    stories: readonly Story[];
    cached: (story: Story) => boolean;
    logger: Logger;
    calibration: Calibration;
    /** The model is known to be loaded (default: when the server said where it runs). */
    loaded?: boolean;
  },
): TimeBudget {
  const budgetMs = budgetFor(config.timeBudgetMs, run.machine);
  if (config.timeBudgetMs === undefined && budgetMs !== null) {
    const where =
      run.machine === null
        ? "may run on the CPU"
        : `runs on the ${run.machine.placement === "cpu" ? "CPU" : "CPU in part"}`;
    run.logger.info(
      `${run.model} ${where}: prompts are sized to finish within ${budgetMs / 60_000} min (--time-budget / DIGEST_TIME_BUDGET; 0 for none)`,
    );
  }
  const prior = run.machine?.placement === "gpu" ? GPU_PRIOR : CPU_PRIOR;
  const expectedRatio = {
    article: run.calibration.expectedRatio("article"),
    discussion: run.calibration.expectedRatio("discussion"),
  };
  const needModel = run.stories.map((story) => !run.cached(story));
  // Answers in German or Japanese take more tokens for the same words (language-tokens.ts).
  const answerRatio = tokensVsEnglish(config.language);
  const plan = planBudget({
    budgetMs,
    stories: needModel.filter(Boolean).length,
    rates: prior,
    ratio: Math.max(expectedRatio.article, expectedRatio.discussion),
    spentMs: run.machine?.loadMs ?? 0,
    promptLimit: promptLimit(run.numCtx),
    answerReserve: answerReserve(run.numCtx),
    answerRatio,
  });
  if (plan.cut !== null) run.logger.info(plan.cut);
  // The first stories, up to the last one needing the model that fits.
  let keep = 0;
  for (let needing = 0; keep < run.stories.length; keep++) {
    if (needModel[keep] && ++needing > plan.stories) break;
  }
  // Every story is a candidate: which ones fit is re-made from the first answer on.
  const budget = createTimeBudget({
    budgetMs,
    slots: run.stories.length * 2,
    keep,
    floorAnswerTokens: minAnswerTokens(answerReserve(run.numCtx), answerRatio),
    meter: createRateMeter(prior),
    promptLimit: promptLimit(run.numCtx),
    timeoutCeilingMs: config.server.timeoutMs,
    spentMs: run.machine?.loadMs ?? 0,
    loaded: run.loaded ?? run.machine !== null,
    expectedRatio,
    answerTokens: plan.answerTokens,
    replanAnswer: (left) =>
      replanAnswer({ ...left, answerReserve: answerReserve(run.numCtx), answerRatio }),
  });
  return budget;
}

/** The window asked for, capped by the model's own context length when /api/show gives one. */
export function contextWindow(
  wanted: number,
  modelLength: number | null,
  model: string,
  logger: Logger,
): number {
  if (modelLength === null || modelLength >= wanted) return wanted;
  logger.info(
    `${model} has a context length of ${modelLength} tokens; using that instead of ${wanted} (OLLAMA_NUM_CTX / --num-ctx)`,
  );
  return modelLength;
}
