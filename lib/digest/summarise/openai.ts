import { stripControl } from "../../text/control.ts";
import { BodyTooLargeError, formatBytes, readTextCapped } from "../fetch/body.ts";
import { describeError, oneLine, safeJson, stripThinking, withTimeout } from "./ollama.ts";

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

/**
 * One call to an OpenAI-compatible server failed. `modelGone` says the server cannot answer any
 * call now (refused connection, rejected key, unknown model, 5xx), not just this one.
 */
export class OpenAiError extends Error {
  override name = "OpenAiError";
  constructor(
    message: string,
    readonly modelGone: boolean,
  ) {
    super(message);
  }
}

export interface ChatInput {
  model: string;
  prompt: string;
  /** Most tokens the answer may take (`max_tokens`). */
  maxTokens: number;
}

/** llama-server's own measure of one call; other servers report none. */
export interface ServerTimings {
  promptTokens: number;
  promptMs: number;
  outputTokens: number;
  outputMs: number;
}

export interface ChatAnswer {
  /** The answer, <think> blocks and control characters removed. */
  text: string;
  /** `finish_reason`: `stop`, or `length` when the answer hit max_tokens; null when not said. */
  doneReason: string | null;
  /** `usage.prompt_tokens`, when the server says. */
  promptTokens: number | null;
  /** `usage.completion_tokens`, when the server says. */
  outputTokens: number | null;
  /** llama-server's `timings`, or null. */
  timings: ServerTimings | null;
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
 * Asks the server for one chat completion. A non-2xx, a 200 carrying `error`, a body without
 * a message and an answer over `maxBytes` are OpenAiErrors. Returns the answer and the call's
 * wall duration (the rate when the server reports no timings).
 */
export async function chatComplete(
  base: string,
  input: ChatInput,
  options: OpenAiOptions = {},
): Promise<ChatAnswer & { wallMs: number }> {
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
    text = await readTextCapped(response, maxBytes);
  } catch (error) {
    if (error instanceof BodyTooLargeError) {
      throw new OpenAiError(
        `The answer from ${url} is larger than ${formatBytes(maxBytes)}; stopped reading it`,
        false,
      );
    }
    throw new OpenAiError(
      `No answer from ${url} (${describeError(error, timeoutMs, url)})`,
      isRefusal(error),
    );
  }
  const wallMs = now() - started;
  const body = safeJson(text);
  if (!response.ok) throw chatFailure(response.status, { url, body, text, input, ...options });
  const error = errorText(body);
  if (error !== undefined) {
    throw new OpenAiError(`${url} reported an error: ${redact(error, options.apiKey)}`, false);
  }
  return { ...parseChatAnswer(body, url), wallMs };
}

/** Reads a chat completion body; throws OpenAiError when it holds no answer. */
export function parseChatAnswer(body: unknown, url: string): ChatAnswer {
  const fields = record(body);
  const choice = record(Array.isArray(fields.choices) ? fields.choices[0] : undefined);
  const content = record(choice.message).content;
  if (typeof content !== "string") {
    throw new OpenAiError(`The answer from ${url} has no message text`, false);
  }
  const answer = stripControl(stripThinking(content));
  if (answer === "") throw new OpenAiError(`The answer from ${url} was empty`, false);
  const usage = record(fields.usage);
  return {
    text: answer,
    doneReason: typeof choice.finish_reason === "string" ? choice.finish_reason : null,
    promptTokens: count(usage.prompt_tokens),
    outputTokens: count(usage.completion_tokens),
    timings: timingsOf(fields.timings),
  };
}

/** llama-server's `timings`, when all four figures are there and make sense. */
export function timingsOf(value: unknown): ServerTimings | null {
  const fields = record(value);
  const promptTokens = count(fields.prompt_n);
  const outputTokens = count(fields.predicted_n);
  const promptMs = positive(fields.prompt_ms);
  const outputMs = positive(fields.predicted_ms);
  if (promptTokens === null || outputTokens === null || promptMs === null || outputMs === null) {
    return null;
  }
  return { promptTokens, promptMs, outputTokens, outputMs };
}

/**
 * What a non-2xx means, with the fix: 401/403 a missing or wrong key, 404 an unknown model or
 * path, 400 most often a prompt longer than the server's context. Refused keys, unknown models
 * and 5xx mean no further call can succeed (`modelGone`).
 */
export function chatFailure(
  status: number,
  context: { url: string; body: unknown; text: string; input: ChatInput; apiKey?: string },
): OpenAiError {
  const detail = redact(
    errorText(context.body) ?? (oneLine(context.text) || "no detail"),
    context.apiKey,
  );
  const said = `${context.url} answered HTTP ${status}: ${detail}`;
  if (status === 401 || status === 403) {
    const fix = context.apiKey
      ? "check OPENAI_API_KEY: the server refused it"
      : "set OPENAI_API_KEY to the key the server expects";
    return new OpenAiError(`${said}; ${fix}`, true);
  }
  if (status === 404) {
    return new OpenAiError(
      `${said}; the server has no model ${context.input.model} (choose one it lists with --model / OPENAI_MODEL)`,
      true,
    );
  }
  if (status === 400 && isContextTooLong(context.body, detail)) {
    const limit = serverContext(context.body);
    return new OpenAiError(
      `${said}; the prompt is longer than the server's context${limit ? ` of ${limit} tokens` : ""}: lower --num-ctx, or give the server a larger one (llama-server -c)`,
      false,
    );
  }
  return new OpenAiError(said, status >= 500);
}

function isContextTooLong(body: unknown, detail: string): boolean {
  const type = record(record(body).error).type;
  return (
    type === "exceed_context_size_error" ||
    /context|too long|too many tokens|maximum.*length/i.test(detail)
  );
}

/** llama-server names its context in a context error (`n_ctx`). */
function serverContext(body: unknown): number | null {
  return count(record(record(body).error).n_ctx);
}

/**
 * The error text of an OpenAI-style body, on one line and terminal-safe: `{"error":{"message"}}`,
 * `{"error":"…"}` (Ollama's /v1, some proxies) or vLLM's older top-level `{"message"}`.
 */
export function errorText(body: unknown): string | undefined {
  const fields = record(body);
  const error = fields.error;
  if (typeof error === "string" && error !== "") return oneLine(error);
  const message = record(error).message ?? (fields.object === "error" ? fields.message : undefined);
  if (typeof message === "string" && message !== "") return oneLine(message);
  if (error !== undefined && error !== null && error !== "") return oneLine(JSON.stringify(error));
  return undefined;
}

/** A server may quote the key it refused; it never reaches a log. */
export function redact(text: string, apiKey: string | undefined): string {
  return apiKey && apiKey.length >= 4 ? text.split(apiKey).join("[OPENAI_API_KEY]") : text;
}

function isRefusal(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return (
    code === "ECONNREFUSED" ||
    code === "ConnectionRefused" ||
    code === "ENOTFOUND" ||
    code === "EHOSTUNREACH" ||
    code === "ENETUNREACH"
  );
}

function record(value: unknown): Record<string, unknown> {
  return value && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function count(value: unknown): number | null {
  return typeof value === "number" && Number.isInteger(value) && value >= 0 ? value : null;
}

function positive(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : null;
}
