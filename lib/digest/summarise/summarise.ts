import type { Logger } from "../../log.ts";
import { errorMessage } from "../../text/error-message.ts";
import type { Part, PipelineContext } from "../pipeline-context.ts";
import { storyName } from "../progress.ts";
import type { SummaryCache } from "./cache.ts";
import { ModelError } from "./model-client.ts";
import { cleanSummary } from "./model-text.ts";
import { answerReserve, type PromptBudget } from "./prompt.ts";
import { estimateTokens } from "./tokens.ts";

export type PartKind = "article" | "discussion";

/** A prompt and what a reader should know about it (how much of the text it holds). */
export interface BuiltPrompt {
  prompt: string;
  notes: string[];
}

export interface SummaryRequest {
  index: number;
  kind: PartKind;
  /** The story's title, for log lines. */
  title: string;
  /** Builds the prompt for a budget: first the whole window, then the time budget's share. */
  build: (budget: PromptBudget) => BuiltPrompt;
}

/** The slot of a story's part in the time budget: 2i for the article, 2i + 1 the discussion. */
export function budgetSlot(index: number, kind: PartKind): number {
  return index * 2 + (kind === "article" ? 0 : 1);
}

/**
 * One summary: from the cache when this prompt was summarised by this model before, otherwise
 * from the model (bounded by the model limiter, earliest story first), with the prompt sized by
 * the time budget when its turn comes and a timeout from its expected time. A failure is a note
 * on the story, never an exception; after Ctrl-C it is not even a warning.
 */
export async function summarise(request: SummaryRequest, context: PipelineContext): Promise<Part> {
  const { config, cache, stats, budget } = context;
  const { index, kind } = request;
  const slot = budgetSlot(index, kind);
  const window: PromptBudget = { numCtx: config.numCtx };
  // Tokens as the prompt builders count them (with the window's calibration, when it has one).
  const tokensOf = (prompt: string) => estimateTokens(prompt, window.scale ?? 1);
  const full = request.build(window);
  const cachedFull = readCache(cache, config.model, full.prompt, context.logger);
  if (cachedFull !== undefined) {
    stats.cached++;
    return { summary: cachedFull, notes: full.notes };
  }
  const want = tokensOf(full.prompt);
  budget.want(slot, want);
  // Article before discussion, earlier stories before later ones: output streams in order.
  const priority = slot;
  const numPredict = answerReserve(config.numCtx);
  let built = full;
  try {
    return await context.llmLimit(async () => {
      const tokens = budget.tokensFor(slot);
      if (tokens < want) {
        built = request.build({ ...window, promptTokens: tokens });
        const cached = readCache(cache, config.model, built.prompt, context.logger);
        if (cached !== undefined) {
          stats.cached++;
          return { summary: cached, notes: built.notes };
        }
      }
      context.progress.update(index, `summarising the ${kind}`);
      const started = performance.now();
      const estimated = tokensOf(built.prompt);
      let answer: Awaited<ReturnType<typeof context.model.generate>>;
      try {
        answer = await context.model.generate(
          { prompt: built.prompt, numCtx: config.numCtx, numPredict },
          {
            timeoutMs: budget.timeoutMs(estimated, numPredict),
            signal: context.signal,
          },
        );
      } catch (error) {
        budget.failed(performance.now() - started);
        throw error;
      }
      budget.answered(answer, estimated);
      return accept(
        answer,
        { ...request, prompt: built.prompt, notes: built.notes, numPredict },
        context,
      );
    }, priority);
  } catch (error) {
    const label = kind === "article" ? "Article" : "Discussion";
    const reason = errorMessage(error);
    if (context.signal?.aborted) return { summary: null, notes: built.notes };
    stats.failed++;
    context.logger.warn(`${storyName(request.title)}: ${kind} summary failed: ${reason}`);
    return { summary: null, notes: [...built.notes, `${label} summary failed: ${reason}.`] };
  }
}

/** The answer as a summary: cleaned, cut to whole sentences when it ran out, cached. */
function accept(
  answer: { text: string; doneReason: string | null; promptTokens: number | null },
  call: { title: string; kind: PartKind; prompt: string; notes: string[]; numPredict: number },
  context: PipelineContext,
): Part {
  const { config, cache, stats } = context;
  let summary = cleanSummary(answer.text);
  if (summary === "") throw new ModelError("The model's answer held only a preamble", "bad-answer");
  stats.generated++;
  const notes = [...call.notes];
  if (answer.doneReason === "length") {
    summary = wholeSentences(summary);
    notes.push(
      `The ${call.kind} summary reached the ${call.numPredict}-token answer limit; its unfinished end is left out.`,
    );
  }
  if (answer.promptTokens !== null && answer.promptTokens > config.numCtx - call.numPredict) {
    context.logger.warn(
      `${storyName(call.title)}: the ${call.kind} prompt took ${answer.promptTokens} of ${config.numCtx} tokens; the model may have cut its front`,
    );
  }
  writeCache(cache, { model: config.model, prompt: call.prompt, summary }, context.logger);
  return { summary, notes };
}

/** The text up to its last finished sentence (all of it when no sentence ends). */
export function wholeSentences(text: string): string {
  const match = /^[\s\S]*[.!?…]["')\]*_]*(?=\s|$)/.exec(text);
  return match ? match[0].trimEnd() : text;
}

function readCache(
  cache: SummaryCache | undefined,
  model: string,
  prompt: string,
  logger: Logger,
): string | undefined {
  try {
    return cache?.get(model, prompt);
  } catch (error) {
    logger.warn(`Summary cache could not be read: ${errorMessage(error)}`);
    return undefined;
  }
}

function writeCache(
  cache: SummaryCache | undefined,
  entry: { model: string; prompt: string; summary: string },
  logger: Logger,
): void {
  try {
    cache?.set(entry.model, entry.prompt, entry.summary);
  } catch (error) {
    logger.warn(`Summary cache could not be written: ${errorMessage(error)}`);
  }
}
