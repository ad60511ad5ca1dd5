import { describeNetworkError } from "../../http/network-error.ts";
import { stripControl } from "../../text/control.ts";
import { BodyTooLargeError, formatBytes, readTextCapped } from "../fetch/body.ts";

/**
 * The largest Ollama answer read. A summary is a few KiB; with `context` (the token ids) and a
 * reasoning model's `thinking` an honest answer stays well under a MiB.
 */
export const OLLAMA_MAX_BYTES = 8 * 1024 * 1024;

export interface OllamaOptions {
  fetch?: typeof fetch;
  timeoutMs?: number;
  /** Answers larger than this fail; default OLLAMA_MAX_BYTES. */
  maxBytes?: number;
  /** Stops the call (Ctrl-C). */
  signal?: AbortSignal;
}

/** One generation failed; the digest records it as a note and goes on. */
export class OllamaError extends Error {
  override name = "OllamaError";
}

export interface GenerateInput {
  model: string;
  prompt: string;
  /** Context window asked for (options.num_ctx). */
  numCtx: number;
  /** Most tokens the answer may take (options.num_predict). */
  numPredict: number;
}

export interface Generated {
  /** The answer, <think> blocks and control characters removed. */
  text: string;
  /** `stop`, or `length` when the answer hit num_predict; null when Ollama did not say. */
  doneReason: string | null;
  /** Tokens Ollama read from the prompt, when it says. */
  promptTokens: number | null;
}

/** A model name without a tag means `:latest` (a `:` inside a registry host is not a tag). */
export function normaliseModelName(name: string): string {
  const lastSegment = name.slice(name.lastIndexOf("/") + 1);
  return lastSegment.includes(":") ? name : `${name}:latest`;
}

/**
 * The request for one non-streamed generation, as a plain value. num_ctx is always sent: an
 * Ollama left at its own default (2048 or 4096) would silently drop the front of a longer
 * prompt, which is where the instruction is.
 */
export function generateRequest(
  base: string,
  input: GenerateInput,
): { url: string; init: RequestInit & { body: string } } {
  const body = {
    model: input.model,
    prompt: input.prompt,
    stream: false,
    options: { num_ctx: input.numCtx, num_predict: input.numPredict },
  };
  return {
    url: `${base}/api/generate`,
    init: {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    },
  };
}

/** Removes reasoning wrapped in <think>…</think> (older setups put it inside `response`). */
export function stripThinking(text: string): string {
  let out = text.replace(/<think>[\s\S]*?<\/think>/gi, "");
  // An unterminated block (answer cut off while still thinking) holds no answer at all.
  const open = out.search(/<think>/i);
  if (open !== -1) out = out.slice(0, open);
  return out.trim();
}

/**
 * Asks Ollama for one completion. Both a non-2xx `{error}` and a 200 carrying `{error}` are
 * failures (OllamaError), and so is an answer larger than `maxBytes`.
 */
export async function generate(
  base: string,
  input: GenerateInput,
  options: OllamaOptions = {},
): Promise<Generated> {
  const {
    fetch: doFetch = globalThis.fetch,
    timeoutMs = 300_000,
    maxBytes = OLLAMA_MAX_BYTES,
  } = options;
  const { url, init } = generateRequest(base, input);
  let response: Response;
  let text: string;
  try {
    response = await doFetch(url, { ...init, signal: withTimeout(timeoutMs, options.signal) });
    text = await readTextCapped(response, maxBytes);
  } catch (error) {
    if (error instanceof BodyTooLargeError) {
      throw new OllamaError(
        `Ollama's answer is larger than ${formatBytes(maxBytes)}; stopped reading it`,
      );
    }
    throw new OllamaError(
      `Ollama did not answer at ${url} (${describeError(error, timeoutMs, url)})`,
    );
  }
  const body = safeJson(text);
  const error = errorField(body);
  if (!response.ok) {
    const hint =
      response.status === 404 && /not found/i.test(error ?? "")
        ? `; run \`ollama pull ${input.model}\``
        : "";
    throw new OllamaError(
      `Ollama answered HTTP ${response.status}: ${error ?? (oneLine(text) || "no detail")}${hint}`,
    );
  }
  if (error !== undefined) throw new OllamaError(`Ollama reported an error: ${error}`);
  const fields = body && typeof body === "object" ? (body as Record<string, unknown>) : {};
  if (typeof fields.response !== "string") {
    throw new OllamaError("Ollama's answer has no response text");
  }
  const answer = stripControl(stripThinking(fields.response));
  if (answer === "") throw new OllamaError("Ollama's answer was empty");
  return {
    text: answer,
    doneReason: typeof fields.done_reason === "string" ? fields.done_reason : null,
    promptTokens: typeof fields.prompt_eval_count === "number" ? fields.prompt_eval_count : null,
  };
}

/** A timeout signal, also aborted by `signal` when one is given. */
export function withTimeout(timeoutMs: number, signal: AbortSignal | undefined): AbortSignal {
  const timeout = AbortSignal.timeout(timeoutMs);
  return signal ? AbortSignal.any([timeout, signal]) : timeout;
}

export function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Ollama's `{error}` text, on one line and terminal-safe, or undefined. */
export function errorField(body: unknown): string | undefined {
  if (body && typeof body === "object" && "error" in body) {
    const value = (body as { error: unknown }).error;
    if (value !== undefined && value !== null && value !== "") return oneLine(String(value));
  }
  return undefined;
}

export function oneLine(text: string): string {
  return stripControl(text).replace(/\s+/g, " ").trim().slice(0, 300);
}

/** Why a request got no answer: a timeout, or the network error naming where it went. */
export function describeError(error: unknown, timeoutMs: number, url: string): string {
  if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")) {
    return `no answer within ${timeoutMs} ms`;
  }
  return oneLine(describeNetworkError(error, url));
}
