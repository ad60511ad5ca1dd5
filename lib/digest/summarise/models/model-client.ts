/**
 * What the digest needs of a model server, whatever its API: a check before the run, one
 * non-streamed answer per prompt, and (when the server can tell) where the model runs. Ollama
 * is one implementation (ollama/client.ts); open-model.ts chooses one, as lib/store/open.ts
 * chooses a store.
 */

/** Known before the first prompt. */
export interface ModelInfo {
  /** The model the answers come from, as the server names it (the first it lists when none was named). */
  model: string;
  /** The model's own context length, or the server's (null when not reported). */
  contextLength: number | null;
}

/** One prompt, the window it is asked in and the most tokens the answer may take. */
export interface ModelRequest {
  prompt: string;
  numCtx: number;
  numPredict: number;
}

export interface CallOptions {
  /** Ctrl-C, or the digest giving up on the model. */
  signal?: AbortSignal;
  /** The call fails with kind "timeout" after this long. */
  timeoutMs: number;
}

/**
 * What one answer measured, so the time budget can learn the machine. Each field the server did
 * not report is null; `wallMs` is always the client's own measure of the whole call.
 */
export interface AnswerTimings {
  /** Reading the prompt (prefill): Ollama's prompt_eval_duration, llama-server's prompt_ms. */
  promptMs: number | null;
  /** Writing the answer (decode): Ollama's eval_duration, llama-server's predicted_ms. */
  answerMs: number | null;
  /** Loading the model (seconds on a cold start). */
  loadMs: number | null;
  wallMs: number;
}

export interface ModelAnswer {
  /** The answer, reasoning blocks and control characters removed. */
  text: string;
  /** `stop`, or `length` when the answer hit numPredict; null when the server did not say. */
  doneReason: string | null;
  /** Prompt tokens the server read (Ollama's prompt_eval_count, usage.prompt_tokens). */
  promptTokens: number | null;
  /** Tokens written (eval_count, usage.completion_tokens). */
  answerTokens: number | null;
  timings: AnswerTimings;
}

/** Where the loaded model runs: all in VRAM, partly, or on the CPU only. */
export type Placement = "gpu" | "partial" | "cpu";

export interface MachineInfo {
  placement: Placement;
  /** Time the server took to load the model for this check, when it had to. */
  loadMs: number | null;
}

export interface ModelClient {
  /** Names the server in messages: "Ollama at http://localhost:11434". */
  readonly describe: string;
  /** Throws PreflightError (exit 1) when the server or the model is not usable. */
  preflight(signal?: AbortSignal): Promise<ModelInfo>;
  generate(request: ModelRequest, options: CallOptions): Promise<ModelAnswer>;
  /**
   * Where the model runs, loading it first when needed (with the window the run will use, so
   * the first prompt does not reload it). Absent when the API cannot tell; null when the check
   * failed.
   */
  machine?(options: { numCtx: number; signal?: AbortSignal }): Promise<MachineInfo | null>;
}

/**
 * Why a call failed. "unreachable" (connection refused, reset, DNS), "missing-model",
 * "unauthorized" (a key refused, 401/403) and "server" (5xx) mean the model cannot answer at all
 * (see modelGone); the others are about this one call.
 */
export type ModelFailureKind =
  | "unreachable"
  | "missing-model"
  | "unauthorized"
  | "server"
  | "timeout"
  | "interrupted"
  | "busy"
  | "rejected"
  | "bad-answer";

/**
 * One call failed; `hint` is what fixes it when the model is gone. `reason` is what happened
 * without the fix: a message that ends with the fix itself (each story's note shows it) passes
 * the rest, so the line a stopped run ends with says the fix once, as the hint.
 */
export class ModelError extends Error {
  override name = "ModelError";
  readonly kind: ModelFailureKind;
  readonly hint: string | undefined;
  readonly reason: string;
  constructor(message: string, kind: ModelFailureKind, hint?: string, reason = message) {
    super(message);
    this.kind = kind;
    this.hint = hint;
    this.reason = reason;
  }
}

/** The server or the model is not there: further calls will fail the same way. */
export function modelGone(error: unknown): error is ModelError {
  return (
    error instanceof ModelError &&
    (error.kind === "unreachable" ||
      error.kind === "missing-model" ||
      error.kind === "unauthorized" ||
      error.kind === "server")
  );
}

/** The server or the model is not usable before the run starts; the message says what to do. */
export class PreflightError extends Error {
  override name = "PreflightError";
}

/**
 * A model name without a tag means `:latest` (a `:` inside a registry host is not a tag): Ollama's
 * rule, and the summary cache's, so llama3.2 and llama3.2:latest share their summaries.
 */
export function normaliseModelName(name: string): string {
  const lastSegment = name.slice(name.lastIndexOf("/") + 1);
  return lastSegment.includes(":") ? name : `${name}:latest`;
}

/** Prompt tokens read per second, when the answer says both. */
export function prefillRate(answer: ModelAnswer): number | null {
  return rate(answer.promptTokens, answer.timings.promptMs);
}

/** Answer tokens written per second, when the answer says both. */
export function decodeRate(answer: ModelAnswer): number | null {
  return rate(answer.answerTokens, answer.timings.answerMs);
}

function rate(tokens: number | null, ms: number | null): number | null {
  if (tokens === null || ms === null || tokens <= 0 || ms <= 0) return null;
  return (tokens * 1000) / ms;
}
