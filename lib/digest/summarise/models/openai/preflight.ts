import { z } from "zod";
import { stripControl } from "../../../../text/control.ts";
import { BodyTooLargeError, formatBytes, readTextCapped } from "../../../fetch/body.ts";
import { PreflightError } from "../model-client.ts";
import { describeError, errorText, safeJson, withTimeout } from "../model-http.ts";
import { authHeader, OPENAI_MAX_BYTES, type OpenAiOptions, redact } from "./chat.ts";

export interface OpenAiModelFacts {
  /** The model the summaries are asked of: the one named, or the first the server lists. */
  model: string;
  /** True when no model was named and the first listed was taken. */
  chosen: boolean;
  /** The context a request may fill, when the server says (llama-server /props, vLLM max_model_len). */
  contextLength: number | null;
}

// An id goes back to the server as it is and is shown in logs and the digest: printable only.
const modelId = z
  .string()
  .min(1)
  .max(512)
  .refine((id) => stripControl(id) === id);
const modelsSchema = z.object({
  data: z.array(
    z.looseObject({
      id: z.unknown(),
      max_model_len: z.unknown().optional(),
      context_length: z.unknown().optional(),
    }),
  ),
});

const START =
  "Start one (e.g. `llama-server -m model.gguf --port 8080`), or point OPENAI_BASE_URL at a running server (LM Studio http://localhost:1234/v1, vLLM http://localhost:8000/v1, Ollama http://localhost:11434/v1).";

/**
 * Checks, before anything else is fetched, that an OpenAI-compatible server answers `GET
 * {base}/models` and has `wanted` (or any model, taking the first, when none is named). Throws
 * a PreflightError naming the URL tried and the fix: start a server, set or check
 * OPENAI_API_KEY, add /v1, use --api=ollama for Ollama's own API, choose a listed model.
 */
export async function openAiPreflight(
  base: string,
  wanted: string | undefined,
  options: OpenAiOptions = {},
): Promise<OpenAiModelFacts> {
  const {
    fetch: doFetch = globalThis.fetch,
    timeoutMs = 10_000,
    maxBytes = OPENAI_MAX_BYTES,
  } = options;
  const url = `${base}/models`;
  let response: Response;
  let text: string;
  try {
    response = await doFetch(url, {
      headers: authHeader(options.apiKey),
      signal: withTimeout(timeoutMs, options.signal),
    });
    // Before anything is cut to length: a key quoted back must not survive in part.
    text = redact(await readTextCapped(response, maxBytes), options.apiKey);
  } catch (error) {
    if (error instanceof BodyTooLargeError) {
      throw new PreflightError(
        `${url} sent an answer larger than ${formatBytes(maxBytes)}, not like an OpenAI-compatible server. Is OPENAI_BASE_URL right?`,
      );
    }
    throw new PreflightError(
      `No OpenAI-compatible server answers at ${url} (${describeError(error, timeoutMs, url)}). ${START}`,
    );
  }
  const body = safeJson(text);
  if (!response.ok) {
    const said = `${url} answered HTTP ${response.status}${detail(body, options.apiKey)}`;
    throw new PreflightError(`${said}. ${await statusFix(response.status, base, options)}`);
  }
  const parsed = modelsSchema.safeParse(body);
  if (!parsed.success) {
    throw new PreflightError(
      `${url} did not answer like an OpenAI-compatible server (no "data" list of models). ${await pathFix(base, options)}`,
    );
  }
  const entries = parsed.data.data.filter((entry) => modelId.safeParse(entry.id).success);
  const ids = entries.map((entry) => entry.id as string);
  if (ids.length === 0) {
    throw new PreflightError(
      `${url} lists no models. Load one into the server (e.g. \`llama-server -m model.gguf\`).`,
    );
  }
  const index = wanted === undefined ? 0 : ids.findIndex((id) => sameModel(id, wanted));
  const entry = entries[index];
  if (entry === undefined) {
    throw new PreflightError(
      `${url} has no model ${wanted} (models: ${ids.slice(0, 10).join(", ")}). Choose one with --model / OPENAI_MODEL, or leave both unset to take the first.`,
    );
  }
  return {
    model: entry.id as string,
    chosen: wanted === undefined,
    contextLength: listedLength(entry) ?? (await serverContext(base, options)),
  };
}

/**
 * Ollama's context when reached through its /v1: a request cannot set it (no num_ctx there), so
 * the default of a machine under 24 GiB of VRAM holds, and a longer prompt loses its front.
 */
export const OLLAMA_V1_CONTEXT = 4096;

/** What the server says a request may fill: llama-server's /props, or Ollama's default behind /v1. */
async function serverContext(base: string, options: OpenAiOptions): Promise<number | null> {
  const slot = await llamaServerContext(base, options);
  if (slot !== null) return slot;
  const root = rootOf(base);
  return root !== undefined && (await answersLikeOllama(root, options)) ? OLLAMA_V1_CONTEXT : null;
}

/** Names match exactly, or as Ollama's /v1 lists them (`llama3.2` is `llama3.2:latest`). */
function sameModel(id: string, wanted: string): boolean {
  return id === wanted || id === `${wanted}:latest`;
}

function listedLength(entry: { max_model_len?: unknown; context_length?: unknown }): number | null {
  for (const value of [entry.max_model_len, entry.context_length]) {
    if (typeof value === "number" && Number.isInteger(value) && value > 0) return value;
  }
  return null;
}

/**
 * llama-server's context per slot (`GET /props`, beside /v1), which a prompt must fit: it
 * refuses a longer one. Null from any other server, or when the call fails.
 */
export async function llamaServerContext(
  base: string,
  options: OpenAiOptions = {},
): Promise<number | null> {
  const root = rootOf(base);
  if (root === undefined) return null;
  const { fetch: doFetch = globalThis.fetch, timeoutMs = 10_000 } = options;
  try {
    const response = await doFetch(`${root}/props`, {
      headers: authHeader(options.apiKey),
      signal: withTimeout(timeoutMs, options.signal),
    });
    const body = safeJson(await readTextCapped(response, 1024 * 1024));
    if (!response.ok) return null;
    const settings = (body as { default_generation_settings?: { n_ctx?: unknown } } | undefined)
      ?.default_generation_settings;
    const nCtx = settings?.n_ctx;
    return typeof nCtx === "number" && Number.isInteger(nCtx) && nCtx > 0 ? nCtx : null;
  } catch {
    return null;
  }
}

/** The server's root when `base` ends in /v1, where llama-server and Ollama keep their own API. */
function rootOf(base: string): string | undefined {
  return base.endsWith("/v1") ? base.slice(0, -3) : undefined;
}

function detail(body: unknown, apiKey: string | undefined): string {
  const text = errorText(body);
  return text ? `: ${redact(text, apiKey)}` : "";
}

async function statusFix(status: number, base: string, options: OpenAiOptions): Promise<string> {
  if (status === 401 || status === 403) {
    return options.apiKey
      ? "The server refused OPENAI_API_KEY: check the key it was started with (llama-server --api-key)."
      : "The server wants a key: set OPENAI_API_KEY.";
  }
  if (status === 404) return pathFix(base, options);
  return START;
}

/**
 * The fix for a base URL that serves no /models: Ollama's own API (answers /api/tags) wants
 * --api=ollama or /v1; any other URL without /v1 most likely lacks it.
 */
async function pathFix(base: string, options: OpenAiOptions): Promise<string> {
  const root = rootOf(base) ?? base;
  if (await answersLikeOllama(root, options)) {
    return `${root} is Ollama's own API: use --api=ollama (LLM_API=ollama) with OLLAMA_ENDPOINT_URL=${root}, or OPENAI_BASE_URL=${root}/v1.`;
  }
  if (!base.endsWith("/v1")) {
    return `OpenAI-compatible servers answer under /v1: try OPENAI_BASE_URL=${base}/v1.`;
  }
  return `Is OPENAI_BASE_URL right? ${START}`;
}

async function answersLikeOllama(root: string, options: OpenAiOptions): Promise<boolean> {
  const { fetch: doFetch = globalThis.fetch, timeoutMs = 10_000 } = options;
  try {
    const response = await doFetch(`${root}/api/tags`, {
      signal: withTimeout(timeoutMs, options.signal),
    });
    const body = safeJson(await readTextCapped(response, 1024 * 1024));
    return response.ok && Array.isArray((body as { models?: unknown } | undefined)?.models);
  } catch {
    return false;
  }
}
