/**
 * What both model clients (Ollama's API and the OpenAI-compatible one) share around one HTTP
 * call: its timeout, what a call without an answer means, and the server's text made safe.
 */
import { describeNetworkError } from "../../../http/network-error.ts";
import { stripControl } from "../../../text/control.ts";
import type { ModelFailureKind } from "./model-client.ts";

/** A timeout signal, also aborted by `signal` when one is given. */
export function withTimeout(timeoutMs: number, signal: AbortSignal | undefined): AbortSignal {
  const timeout = AbortSignal.timeout(timeoutMs);
  return signal ? AbortSignal.any([timeout, signal]) : timeout;
}

/** A call that got no answer: Ctrl-C (or the run stopping it), its timeout, or the network. */
export function callFailureKind(error: unknown, signal: AbortSignal | undefined): ModelFailureKind {
  if (signal?.aborted) return "interrupted";
  if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")) {
    return "timeout";
  }
  return "unreachable";
}

/** The body as JSON, or undefined when it is not JSON (a proxy's HTML page). */
export function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A server's text for a message: no control characters, one line, at most 300 characters. */
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

/** Removes reasoning wrapped in <think>…</think> (older setups put it inside `response`). */
export function stripThinking(text: string): string {
  let out = text.replace(/<think>[\s\S]*?<\/think>/gi, "");
  // An unterminated block (answer cut off while still thinking) holds no answer at all.
  const open = out.search(/<think>/i);
  if (open !== -1) out = out.slice(0, open);
  return out.trim();
}

/**
 * A server's error text, on one line and terminal-safe: `{"error":"…"}` (Ollama, some proxies),
 * OpenAI's `{"error":{"message"}}` or vLLM's older top-level `{"message"}`.
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

/** The value as an object's fields, or none when it is not a (non-array) object. */
export function record(value: unknown): Record<string, unknown> {
  return value && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}
