import type { Logger } from "../../log.ts";
import { errorMessage } from "../../text/error-message.ts";
import type { Part, PipelineContext } from "../pipeline-context.ts";
import { storyName } from "../progress.ts";
import type { Coverage, ItemId } from "../types.ts";
import type { StoredSummary, SummaryKind } from "./cache.ts";
import { usableSample } from "./calibration.ts";
import { cleanSummary } from "./model-text.ts";
import { ModelError } from "./models/model-client.ts";
import type { PromptBudget } from "./prompt.ts";
import { estimateTokens } from "./tokens.ts";

export type PartKind = SummaryKind;

/**
 * A prompt, what a reader should know about it (how much of the text it holds), and what the
 * cache keeps with its summary so a later run can reuse or update it.
 */
export interface BuiltPrompt {
  prompt: string;
  notes: string[];
  record: Omit<StoredSummary, "summary" | "createdAt">;
  coverage: Partial<Coverage>;
  /** The answer made ready to show and keep (a discussion's citations resolved, its quotes checked). */
  finish?: (summary: string) => { summary: string; notes: string[] };
}

export interface SummaryRequest {
  index: number;
  storyId: ItemId;
  kind: PartKind;
  /** The story's title, for log lines. */
  title: string;
  /** Builds the prompt for a budget: first the whole window, then the time budget's share. */
  build: (budget: PromptBudget) => BuiltPrompt;
  /**
   * What the reader gets when no new summary can be had: the earlier summary of this story, with
   * a note saying how old it is. Absent: nothing earlier to show.
   */
  fallback?: Fallback;
}

/** An earlier summary, shown when a new one fails. */
export interface Fallback {
  summary: string;
  notes: string[];
  coverage: Partial<Coverage>;
  /** What the call was for: bring it up to date, or make it again with more room. */
  redo: "update" | "fuller";
}

const REDO_TEXT: Record<Fallback["redo"], string> = {
  update: "brought up to date",
  fuller: "made again from more of the text",
};

/** The slot of a story's part in the time budget: 2i for the article, 2i + 1 the discussion. */
export function budgetSlot(index: number, kind: PartKind): number {
  return index * 2 + (kind === "article" ? 0 : 1);
}

/**
 * One summary from the model (bounded by the model limiter, earliest story first), with the
 * prompt sized by the time budget when its turn comes, in tokens calibrated for the model, and a
 * timeout from its expected time. The summary is kept in the cache with what it was made from
 * (whether to ask at all was decided before: see discussion-summary.ts, article-part.ts). A
 * failure is a note on the story, never an exception; after Ctrl-C it is not even a warning.
 * When the call fails, an earlier summary, if there is one, is shown rather than none (still
 * counted as failed: the run's summary line and exit status say the model did not answer).
 */
export async function summarise(request: SummaryRequest, context: PipelineContext): Promise<Part> {
  const { config, stats, budget } = context;
  const { index, kind } = request;
  const slot = budgetSlot(index, kind);
  // The answer as long as the budget's plan allows, and the instruction saying so; planned again
  // when the call's turn comes, as answers measure the machine.
  const windowFor = (answerTokens: number): PromptBudget => ({
    numCtx: config.numCtx,
    scale: context.calibration.scale(kind),
    instruction: { answerTokens, language: config.language },
  });
  let numPredict = budget.answerTokens();
  const window = windowFor(numPredict);
  // Tokens as the prompt builders count them (with the model's calibration).
  const tokensOf = (prompt: string) => estimateTokens(prompt, window.scale ?? 1);
  const full = request.build(window);
  const want = tokensOf(full.prompt);
  budget.want(slot, want);
  // Article before discussion, earlier stories before later ones: output streams in order.
  const priority = slot;
  let built = full;
  try {
    return await context.llmLimit(async () => {
      // The budget re-plans which stories fit as answers measure the machine: one past them is
      // left out (an earlier summary, when there is one, shown as it was).
      if (!budget.admits(slot)) return leftOut(request);
      const planned = numPredict;
      numPredict = budget.answerTokens();
      const tokens = budget.tokensFor(slot);
      const atTurn = numPredict === planned ? window : windowFor(numPredict);
      if (tokens < want) built = request.build({ ...atTurn, promptTokens: tokens });
      else if (atTurn !== window) built = request.build(atTurn);
      // Ctrl-C, or the model gone, while this call waited its turn: no call.
      if (context.signal?.aborted) throw new ModelError("Stopped before the call", "interrupted");
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
        budget.finish(slot);
        throw error;
      }
      budget.answered(slot, answer, estimated);
      // Done before the next call is planned (the part itself ends a few steps later).
      budget.finish(slot);
      context.health.answered();
      return accept(answer, { ...request, built, numPredict }, context);
    }, priority);
  } catch (error) {
    const label = kind === "article" ? "Article" : "Discussion";
    const reason = errorMessage(error);
    if (context.signal?.aborted) return { summary: null, notes: built.notes };
    stats.failed++;
    context.health.failed(error, () =>
      context.logger.warn(`${storyName(request.title)}: ${kind} summary failed: ${reason}`),
    );
    const { fallback } = request;
    if (fallback) {
      const { redo, ...part } = fallback;
      const failed = `${label} summary could not be ${REDO_TEXT[redo]} (${reason}); the earlier one is shown.`;
      return { ...part, notes: [...part.notes, failed] };
    }
    return { summary: null, notes: [...built.notes, `${label} summary failed: ${reason}.`] };
  }
}

/** A part the time budget had no room for when its turn came: the earlier summary, or none. */
function leftOut(request: SummaryRequest): Part {
  const { fallback, kind } = request;
  if (!fallback) return { summary: null, notes: [], leftOut: true };
  const { redo, ...part } = fallback;
  const label = kind === "article" ? "Article" : "Discussion";
  const note = `${label} summary could not be ${REDO_TEXT[redo]} within the time budget; the earlier one is shown.`;
  return { ...part, notes: [...part.notes, note] };
}

/**
 * The answer as a summary: cleaned, cut to whole sentences when it ran out, kept in the cache;
 * its prompt-token count calibrates the estimate for the model.
 */
function accept(
  answer: { text: string; doneReason: string | null; promptTokens: number | null },
  call: { title: string; storyId: ItemId; kind: PartKind; built: BuiltPrompt; numPredict: number },
  context: PipelineContext,
): Part {
  const { config, cache, stats } = context;
  const { built, kind } = call;
  let summary = cleanSummary(answer.text);
  if (summary === "") throw new ModelError("The model's answer held only a preamble", "bad-answer");
  stats.generated++;
  let notes = [...built.notes];
  // Only an answer the server says it stopped at num_predict (Ollama's done_reason, OpenAI's
  // finish_reason) was cut.
  if (answer.doneReason === "length") {
    summary = wholeSentences(summary);
    notes = withCutNote(notes, kind, call.numPredict);
  }
  if (answer.promptTokens !== null && answer.promptTokens > config.numCtx - call.numPredict) {
    context.logger.warn(
      `${storyName(call.title)}: the ${kind} prompt took ${answer.promptTokens} of ${config.numCtx} tokens; the model may have cut its front`,
    );
  }
  if (answer.promptTokens !== null) {
    const sample = { kind, estimated: estimateTokens(built.prompt), counted: answer.promptTokens };
    if (usableSample(sample, config.numCtx)) {
      guard(() => cache?.recordTokens(config.model, sample), "written", context.logger);
    }
  }
  if (built.finish) {
    const finished = built.finish(summary);
    summary = finished.summary;
    notes.push(...finished.notes);
  }
  const key = { storyId: call.storyId, kind };
  guard(
    () => cache?.store(config.model, key, { ...built.record, summary }),
    "written",
    context.logger,
  );
  return { summary, notes, coverage: built.coverage };
}

/**
 * A half's notes with its answer's cut said once: in its last note (what the model saw) when it
 * has one, so a cut story carries one note per half, not two.
 */
export function withCutNote(notes: readonly string[], kind: PartKind, limit: number): string[] {
  const cut = `cut at the ${limit}-token answer limit, after its last whole sentence`;
  const last = notes.at(-1);
  if (last === undefined) return [`The ${kind} summary was ${cut}.`];
  return [...notes.slice(0, -1), `${last.replace(/\.$/, "")}; the summary was ${cut}.`];
}

/** The text up to its last finished sentence (all of it when no sentence ends). */
export function wholeSentences(text: string): string {
  const match = /^[\s\S]*[.!?…]["')\]*_]*(?=\s|$)/.exec(text);
  return match ? match[0].trimEnd() : text;
}

/** The cached summary of a story's article or discussion, if any (a broken cache is a miss). */
export function readStored(
  context: PipelineContext,
  storyId: ItemId,
  kind: SummaryKind,
): StoredSummary | undefined {
  const { cache, config } = context;
  return guard(() => cache?.lookup(config.model, storyId, kind), "read", context.logger);
}

/** The cache is an optimisation: a failure to read or write it is a warning, never an error. */
function guard<T>(use: () => T, verb: string, logger: Logger): T | undefined {
  try {
    return use();
  } catch (error) {
    logger.warn(`Summary cache could not be ${verb}: ${errorMessage(error)}`);
    return undefined;
  }
}
