import { z } from "zod";
import { stripControl } from "../text/control.ts";
import { BodyTooLargeError, formatBytes, readTextCapped } from "./body.ts";

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
}

/** Ollama is not usable for this digest; the message says what to do about it. */
export class PreflightError extends Error {
  override name = "PreflightError";
}

/** One generation failed; the digest records it as a note and goes on. */
export class OllamaError extends Error {
  override name = "OllamaError";
}

/** A model name without a tag means `:latest` (a `:` inside a registry host is not a tag). */
export function normaliseModelName(name: string): string {
  const lastSegment = name.slice(name.lastIndexOf("/") + 1);
  return lastSegment.includes(":") ? name : `${name}:latest`;
}

/** The request for one non-streamed generation, as a plain value. */
export function generateRequest(
  base: string,
  options: { model: string; prompt: string; numCtx?: number },
): { url: string; init: RequestInit & { body: string } } {
  const body: Record<string, unknown> = {
    model: options.model,
    prompt: options.prompt,
    stream: false,
  };
  if (options.numCtx !== undefined) body.options = { num_ctx: options.numCtx };
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

const tagsSchema = z.object({
  models: z.array(z.object({ name: z.string().optional(), model: z.string().optional() })),
});

/**
 * Checks, before anything else is fetched, that Ollama answers at `base` and has `model`.
 * Throws a PreflightError naming the URL tried and the command that fixes it.
 */
export async function preflight(
  base: string,
  model: string,
  options: OllamaOptions = {},
): Promise<void> {
  const {
    fetch: doFetch = globalThis.fetch,
    timeoutMs = 10_000,
    maxBytes = OLLAMA_MAX_BYTES,
  } = options;
  const url = `${base}/api/tags`;
  const start = `Start it with \`ollama serve\` (and fetch the model with \`ollama pull ${model}\`), or point OLLAMA_ENDPOINT_URL / --ollama-url at a running Ollama.`;
  let response: Response;
  let text: string;
  try {
    response = await doFetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    text = await readTextCapped(response, maxBytes);
  } catch (error) {
    if (error instanceof BodyTooLargeError) {
      throw new PreflightError(
        `${url} sent an answer larger than ${formatBytes(maxBytes)}, not like Ollama. Is OLLAMA_ENDPOINT_URL right? ${start}`,
      );
    }
    throw new PreflightError(
      `Ollama does not answer at ${url} (${describe(error, timeoutMs)}). ${start}`,
    );
  }
  if (!response.ok) {
    throw new PreflightError(
      `Ollama at ${url} answered HTTP ${response.status}${errorDetail(text)}. ${start}`,
    );
  }
  const parsed = tagsSchema.safeParse(safeJson(text));
  if (!parsed.success) {
    throw new PreflightError(
      `${url} did not answer like Ollama (no "models" list). Is OLLAMA_ENDPOINT_URL right? ${start}`,
    );
  }
  const wanted = normaliseModelName(model);
  const installed = parsed.data.models.flatMap((entry) =>
    [entry.name, entry.model].filter((name): name is string => Boolean(name)),
  );
  if (!installed.some((name) => normaliseModelName(name) === wanted)) {
    const names = [...new Set(installed.map(normaliseModelName))];
    const listed =
      names.length > 0 ? `installed: ${names.slice(0, 10).join(", ")}` : "none installed";
    throw new PreflightError(
      `Ollama at ${url} has no model ${wanted} (${stripControl(listed)}). Run \`ollama pull ${model}\`, or choose another with --model / OLLAMA_MODEL.`,
    );
  }
}

/**
 * Asks Ollama for one completion and returns the answer with any <think> block removed.
 * Both a non-2xx `{error}` and a 200 carrying `{error}` are failures (OllamaError).
 */
export async function generate(
  base: string,
  request: { model: string; prompt: string; numCtx?: number },
  options: OllamaOptions = {},
): Promise<string> {
  const {
    fetch: doFetch = globalThis.fetch,
    timeoutMs = 300_000,
    maxBytes = OLLAMA_MAX_BYTES,
  } = options;
  const { url, init } = generateRequest(base, request);
  let response: Response;
  let text: string;
  try {
    response = await doFetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    text = await readTextCapped(response, maxBytes);
  } catch (error) {
    if (error instanceof BodyTooLargeError) {
      throw new OllamaError(
        `Ollama's answer is larger than ${formatBytes(maxBytes)}; stopped reading it`,
      );
    }
    throw new OllamaError(`Ollama did not answer at ${url} (${describe(error, timeoutMs)})`);
  }
  const body = safeJson(text);
  const error = errorField(body);
  if (!response.ok) {
    const hint =
      response.status === 404 && /not found/i.test(error ?? "")
        ? `; run \`ollama pull ${request.model}\``
        : "";
    throw new OllamaError(
      `Ollama answered HTTP ${response.status}: ${error ?? (clean(text) || "no detail")}${hint}`,
    );
  }
  if (error !== undefined) throw new OllamaError(`Ollama reported an error: ${error}`);
  const answer =
    body && typeof body === "object" && "response" in body
      ? (body as { response: unknown }).response
      : undefined;
  if (typeof answer !== "string") throw new OllamaError("Ollama's answer has no response text");
  const summary = stripControl(stripThinking(answer));
  if (summary === "") throw new OllamaError("Ollama's answer was empty");
  return summary;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function errorField(body: unknown): string | undefined {
  if (body && typeof body === "object" && "error" in body) {
    const value = (body as { error: unknown }).error;
    if (value !== undefined && value !== null && value !== "") return clean(String(value));
  }
  return undefined;
}

function errorDetail(text: string): string {
  const error = errorField(safeJson(text));
  return error ? `: ${error}` : "";
}

function clean(text: string): string {
  return stripControl(text).replace(/\s+/g, " ").trim().slice(0, 300);
}

function describe(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")) {
    return `no answer within ${timeoutMs} ms`;
  }
  return clean(error instanceof Error ? error.message : String(error));
}
