import { stripControl } from "../../../../text/control.ts";
import { BodyTooLargeError, formatBytes, readTextCapped } from "../../../fetch/body.ts";
import { type AnswerTimings, type ModelAnswer, ModelError } from "../model-client.ts";
import {
  callFailureKind,
  describeError,
  errorText,
  oneLine,
  record,
  safeJson,
  stripThinking,
  withTimeout,
} from "../model-http.ts";

/** The largest chat completion read: a summary is a few KiB; a reasoning model's text stays far below. */
export const OPENAI_MAX_BYTES = 8 * 1024 * 1024;

/** Kept short and fixed: the same first tokens on every call let the server reuse its prompt cache. */
export const SYSTEM_MESSAGE =
  "You write short, factual summaries for readers of Hacker News. Answer in English, in plain prose.";

/** Low, so a summary keeps to what the text says. */
export const TEMPERATURE = 0.2;

export interface OpenAiOptions {
  fetch?: typeof fetch;
  timeoutMs?: number;
  /** Answers larger than this fail; default OPENAI_MAX_BYTES. */
  maxBytes?: number;
  /** Sent as `Authorization: Bearer …`; never shown in a message. */
  apiKey?: string;
  /** Stops the call (Ctrl-C). */
  signal?: AbortSignal;
  /** Milliseconds, for a call's wall duration (default performance.now). */
  now?: () => number;
}

export interface ChatInput {
  model: string;
  prompt: string;
  /** Most tokens the answer may take (`max_tokens`). */
  maxTokens: number;
}

/** The request for one non-streamed chat completion, as a plain value. */
export function chatRequest(
  base: string,
  input: ChatInput,
  apiKey?: string,
): { url: string; init: RequestInit & { body: string; headers: Record<string, string> } } {
  const body = {
    model: input.model,
    messages: [
      { role: "system", content: SYSTEM_MESSAGE },
      { role: "user", content: input.prompt },
    ],
    stream: false,
    max_tokens: input.maxTokens,
    temperature: TEMPERATURE,
  };
  return {
    url: `${base}/chat/completions`,
    init: {
      method: "POST",
      headers: { "content-type": "application/json", ...authHeader(apiKey) },
      body: JSON.stringify(body),
    },
  };
}

export function authHeader(apiKey: string | undefined): Record<string, string> {
  return apiKey ? { authorization: `Bearer ${apiKey}` } : {};
}

/**
 * Asks the server for one chat completion. A non-2xx, a 200 carrying `error`, a body without a
 * message and an answer over `maxBytes` are ModelErrors whose kind says whether the server can
 * answer at all. Rates come from llama-server's `timings`, else only the wall time is known.
 */
export async function chatComplete(
  base: string,
  input: ChatInput,
  options: OpenAiOptions = {},
): Promise<ModelAnswer> {
  const call = await chatCall(base, input, options);
  return parseChatAnswer(call.body, call);
}

/** One chat completion call, up to a 2xx body without `error`; see chatComplete. */
export async function chatCall(
  base: string,
  input: ChatInput,
  options: OpenAiOptions = {},
): Promise<{ body: unknown; url: string; wallMs: number }> {
  const {
    fetch: doFetch = globalThis.fetch,
    timeoutMs = 300_000,
    maxBytes = OPENAI_MAX_BYTES,
    now = () => performance.now(),
  } = options;
  const { url, init } = chatRequest(base, input, options.apiKey);
  const started = now();
  let response: Response;
  let text: string;
  try {
    response = await doFetch(url, { ...init, signal: withTimeout(timeoutMs, options.signal) });
    // Before anything is cut to length: a key quoted back must not survive in part.
    text = redact(await readTextCapped(response, maxBytes), options.apiKey);
  } catch (error) {
    if (error instanceof BodyTooLargeError) {
      throw new ModelError(
        `The answer from ${url} is larger than ${formatBytes(maxBytes)}; stopped reading it`,
        "bad-answer",
      );
    }
    throw new ModelError(
      `No answer from ${url} (${describeError(error, timeoutMs, url)})`,
      callFailureKind(error, options.signal),
      "Start the server again, or point OPENAI_BASE_URL / --openai-url at a running one.",
    );
  }
  const wallMs = now() - started;
  const body = safeJson(text);
  if (!response.ok) throw chatFailure(response.status, { url, body, text, input, ...options });
  const error = errorText(body);
  if (error !== undefined) {
    throw new ModelError(
      `${url} reported an error: ${redact(error, options.apiKey)}`,
      "bad-answer",
    );
  }
  return { body, url, wallMs };
}

/** Reads a chat completion body; throws a ModelError when it holds no answer. */
export function parseChatAnswer(body: unknown, call: { url: string; wallMs: number }): ModelAnswer {
  const fields = record(body);
  const choice = record(Array.isArray(fields.choices) ? fields.choices[0] : undefined);
  const content = record(choice.message).content;
  if (typeof content !== "string") {
    throw new ModelError(`The answer from ${call.url} has no message text`, "bad-answer");
  }
  const answer = stripControl(stripThinking(content));
  if (answer === "") throw new ModelError(`The answer from ${call.url} was empty`, "bad-answer");
  const usage = record(fields.usage);
  const promptTokens = count(usage.prompt_tokens);
  return {
    text: answer,
    doneReason: typeof choice.finish_reason === "string" ? choice.finish_reason : null,
    promptTokens,
    answerTokens: count(usage.completion_tokens),
    timings: timingsOf(fields.timings, promptTokens, call.wallMs),
  };
}

/**
 * llama-server's `timings` as the digest measures a call. `prompt_n` counts only the tokens
 * read this time (a prefix the server had cached is skipped), so the prefill time is scaled to
 * the whole prompt: the rate promptTokens / promptMs is then the rate the server really read
 * at. Other servers report none: only the wall time is known.
 */
export function timingsOf(
  value: unknown,
  promptTokens: number | null,
  wallMs: number,
): AnswerTimings {
  const fields = record(value);
  const promptRead = count(fields.prompt_n);
  const promptMs = positive(fields.prompt_ms);
  const answerMs = positive(fields.predicted_ms);
  const none = { promptMs: null, answerMs: null, loadMs: null, wallMs };
  if (promptRead === null || promptRead === 0 || promptMs === null || answerMs === null) {
    return none;
  }
  const whole = promptTokens !== null && promptTokens > promptRead ? promptTokens / promptRead : 1;
  return { promptMs: promptMs * whole, answerMs, loadMs: null, wallMs };
}

/**
 * What a non-2xx means, with the fix: 401/403 a missing or refused key, 404 an unknown model, 400
 * most often a prompt longer than the server's context. A refused key, an unknown model and a
 * 5xx mean no further call can succeed.
 */
export function chatFailure(
  status: number,
  context: { url: string; body: unknown; text: string; input: ChatInput; apiKey?: string },
): ModelError {
  const detail = redact(
    errorText(context.body) ?? (oneLine(context.text) || "no detail"),
    context.apiKey,
  );
  const said = `${context.url} answered HTTP ${status}: ${detail}`;
  if (status === 401 || status === 403) {
    const fix = context.apiKey
      ? "Check OPENAI_API_KEY: the server refused it."
      : "Set OPENAI_API_KEY to the key the server expects.";
    return new ModelError(`${said}; ${asClause(fix)}`, "unauthorized", fix, said);
  }
  if (status === 404) {
    const fix = `Choose a model the server lists with --model / OPENAI_MODEL, or leave both unset to take the first.`;
    const missing = `${said}; the server has no model ${context.input.model}`;
    return new ModelError(
      `${missing}: choose one it lists with --model / OPENAI_MODEL`,
      "missing-model",
      fix,
      missing,
    );
  }
  if (status === 400 && isContextTooLong(context.body, detail)) {
    const limit = serverContext(context.body);
    return new ModelError(
      `${said}; the prompt is longer than the server's context${limit ? ` of ${limit} tokens` : ""}: lower --num-ctx, or give the server a larger one (llama-server -c)`,
      "rejected",
    );
  }
  if (status >= 500) {
    return new ModelError(
      said,
      "server",
      "The server fails on every request: look at its log and restart it.",
    );
  }
  return new ModelError(said, status === 429 ? "busy" : "rejected");
}

/** A sentence as the end of another: "Check X." → "check X". */
function asClause(sentence: string): string {
  return sentence.charAt(0).toLowerCase() + sentence.slice(1).replace(/\.$/, "");
}

function isContextTooLong(body: unknown, detail: string): boolean {
  const type = record(record(body).error).type;
  return (
    type === "exceed_context_size_error" ||
    /context|too long|too many tokens|token limit|maximum.*length/i.test(detail)
  );
}

/** llama-server names its context in a context error (`n_ctx`). */
function serverContext(body: unknown): number | null {
  return count(record(record(body).error).n_ctx);
}

/** A server may quote the key it refused; it never reaches a log. */
export function redact(text: string, apiKey: string | undefined): string {
  return apiKey && apiKey.length >= 4 ? text.split(apiKey).join("[OPENAI_API_KEY]") : text;
}

export function count(value: unknown): number | null {
  return typeof value === "number" && Number.isInteger(value) && value >= 0 ? value : null;
}

function positive(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : null;
}
