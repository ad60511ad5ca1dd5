import type { Logger } from "../../log.ts";
import { errorMessage } from "../../text/error-message.ts";
import type { Part, PipelineContext } from "../pipeline-context.ts";
import { storyName } from "../progress.ts";
import type { SummaryCache } from "./cache.ts";
import { ModelError } from "./model-client.ts";
import { cleanSummary } from "./model-text.ts";
import { answerReserve } from "./prompt.ts";

export type PartKind = "article" | "discussion";

/**
 * One summary: from the cache when this exact prompt was summarised by this model before,
 * otherwise from Ollama (bounded by the Ollama limiter, earliest story first). A failure is a
 * note on the story, never an exception.
 */
export async function summarise(
  prompt: string,
  part: { index: number; kind: PartKind; notes: string[]; title: string },
  context: PipelineContext,
): Promise<Part> {
  const { config, cache, stats } = context;
  const cached = readCache(cache, config.model, prompt, context.logger);
  if (cached !== undefined) {
    stats.cached++;
    return { summary: cached, notes: part.notes };
  }
  const label = part.kind === "article" ? "Article" : "Discussion";
  // Article before discussion, earlier stories before later ones: output streams in order.
  const priority = part.index * 2 + (part.kind === "article" ? 0 : 1);
  const numPredict = answerReserve(config.numCtx);
  try {
    const answer = await context.llmLimit(() => {
      context.progress.update(part.index, `summarising the ${part.kind}`);
      return context.model.generate(
        { prompt, numCtx: config.numCtx, numPredict },
        { timeoutMs: config.ollamaTimeoutMs, signal: context.signal },
      );
    }, priority);
    let summary = cleanSummary(answer.text);
    if (summary === "")
      throw new ModelError("The model's answer held only a preamble", "bad-answer");
    stats.generated++;
    const notes = [...part.notes];
    if (answer.doneReason === "length") {
      summary = wholeSentences(summary);
      notes.push(
        `The ${part.kind} summary reached the ${numPredict}-token answer limit; its unfinished end is left out.`,
      );
    }
    if (answer.promptTokens !== null && answer.promptTokens > config.numCtx - numPredict) {
      context.logger.warn(
        `${storyName(part.title)}: the ${part.kind} prompt took ${answer.promptTokens} of ${config.numCtx} tokens; Ollama may have cut its front`,
      );
    }
    writeCache(cache, { model: config.model, prompt, summary }, context.logger);
    return { summary, notes };
  } catch (error) {
    stats.failed++;
    const reason = errorMessage(error);
    context.logger.warn(`${storyName(part.title)}: ${part.kind} summary failed: ${reason}`);
    return { summary: null, notes: [...part.notes, `${label} summary failed: ${reason}.`] };
  }
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
