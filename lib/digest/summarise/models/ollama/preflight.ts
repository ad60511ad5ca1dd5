import { z } from "zod";
import { stripControl } from "../../../../text/control.ts";
import { BodyTooLargeError, formatBytes, readTextCapped } from "../../../fetch/body.ts";
import {
  type MachineInfo,
  normaliseModelName,
  type Placement,
  PreflightError,
} from "../model-client.ts";
import { describeError, errorText, record, safeJson, withTimeout } from "../model-http.ts";
import { OLLAMA_MAX_BYTES, type OllamaOptions } from "./generate.ts";

export interface ModelFacts {
  /** The model's own context length from /api/show, or null when it does not report one. */
  contextLength: number | null;
}

const tagsSchema = z.object({
  models: z.array(z.object({ name: z.string().optional(), model: z.string().optional() })),
});

/**
 * Checks, before anything else is fetched, that Ollama answers at `base` and has `model`, then
 * asks /api/show for the model's context length. Throws a PreflightError naming the URL tried
 * and the command that fixes it; a failing /api/show only means the length is unknown.
 */
export async function preflight(
  base: string,
  model: string,
  options: OllamaOptions = {},
): Promise<ModelFacts> {
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
    response = await doFetch(url, { signal: withTimeout(timeoutMs, options.signal) });
    text = await readTextCapped(response, maxBytes);
  } catch (error) {
    if (error instanceof BodyTooLargeError) {
      throw new PreflightError(
        `${url} sent an answer larger than ${formatBytes(maxBytes)}, not like Ollama. Is OLLAMA_ENDPOINT_URL right? ${start}`,
      );
    }
    throw new PreflightError(
      `Ollama does not answer at ${url} (${describeError(error, timeoutMs, url)}). ${start}`,
    );
  }
  if (!response.ok) {
    const error = errorText(safeJson(text));
    const fix = (await openAiFix(base, options)) ?? start;
    throw new PreflightError(
      `Ollama at ${url} answered HTTP ${response.status}${error ? `: ${error}` : ""}. ${fix}`,
    );
  }
  const parsed = tagsSchema.safeParse(safeJson(text));
  if (!parsed.success) {
    const fix = (await openAiFix(base, options)) ?? `Is OLLAMA_ENDPOINT_URL right? ${start}`;
    throw new PreflightError(`${url} did not answer like Ollama (no "models" list). ${fix}`);
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
  return { contextLength: await showContextLength(base, model, options) };
}

/** The fix when `base` is an OpenAI-compatible server (llama-server, LM Studio, vLLM) rather than Ollama. */
async function openAiFix(base: string, options: OllamaOptions): Promise<string | undefined> {
  const openAiBase = await openAiBaseAt(base, {
    fetch: options.fetch,
    timeoutMs: options.timeoutMs,
    signal: options.signal,
  });
  return openAiBase === undefined
    ? undefined
    : `It is an OpenAI-compatible server (it answers ${openAiBase}/models), not Ollama: use --api=openai (LLM_API=openai) with OPENAI_BASE_URL=${openAiBase}.`;
}

/**
 * The model's context length as /api/show reports it in `model_info` (`<architecture>.context_length`),
 * or null when the call fails or the field is missing (older Ollama versions).
 */
export async function showContextLength(
  base: string,
  model: string,
  options: OllamaOptions = {},
): Promise<number | null> {
  const {
    fetch: doFetch = globalThis.fetch,
    timeoutMs = 10_000,
    maxBytes = OLLAMA_MAX_BYTES,
  } = options;
  try {
    const response = await doFetch(`${base}/api/show`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model }),
      signal: withTimeout(timeoutMs, options.signal),
    });
    const body = safeJson(await readTextCapped(response, maxBytes));
    return response.ok ? contextLengthOf(body) : null;
  } catch {
    return null;
  }
}

/** Reads `model_info["<arch>.context_length"]` (any `*.context_length` when the arch is unnamed). */
export function contextLengthOf(body: unknown): number | null {
  if (!body || typeof body !== "object" || !("model_info" in body)) return null;
  const info = (body as { model_info: unknown }).model_info;
  if (!info || typeof info !== "object") return null;
  const fields = info as Record<string, unknown>;
  const arch = fields["general.architecture"];
  const keys =
    typeof arch === "string"
      ? [`${arch}.context_length`]
      : Object.keys(fields).filter((key) => key.endsWith(".context_length"));
  for (const key of keys) {
    const value = fields[key];
    if (typeof value === "number" && Number.isInteger(value) && value > 0) return value;
  }
  return null;
}

const psSchema = z.object({
  models: z.array(
    z.object({
      name: z.string().optional(),
      model: z.string().optional(),
      size: z.number().nonnegative(),
      size_vram: z.number().nonnegative().optional(),
    }),
  ),
});

/**
 * Where `model` runs, from `GET /api/ps`: `size_vram` 0 is the CPU, equal to `size` the GPU.
 * When the model is not loaded yet, an empty prompt loads it (Ollama answers `done_reason: load`
 * without generating), with the window the digest will ask for so the first summary does not
 * load it again. Null when Ollama does not tell; never throws.
 */
export async function machineInfo(
  base: string,
  model: string,
  options: OllamaOptions & { numCtx: number },
): Promise<MachineInfo | null> {
  try {
    let placement = await placementOf(base, model, options);
    let loadMs: number | null = null;
    if (placement === undefined) {
      loadMs = await loadModel(base, model, options);
      placement = await placementOf(base, model, options);
    }
    return placement === undefined ? null : { placement, loadMs };
  } catch {
    return null;
  }
}

async function placementOf(
  base: string,
  model: string,
  options: OllamaOptions,
): Promise<Placement | undefined> {
  const { fetch: doFetch = globalThis.fetch, timeoutMs = 10_000 } = options;
  const response = await doFetch(`${base}/api/ps`, {
    signal: withTimeout(Math.min(timeoutMs, 10_000), options.signal),
  });
  const parsed = psSchema.safeParse(
    safeJson(await readTextCapped(response, options.maxBytes ?? OLLAMA_MAX_BYTES)),
  );
  if (!response.ok || !parsed.success) return undefined;
  const wanted = normaliseModelName(model);
  const entry = parsed.data.models.find(
    (m) => normaliseModelName(m.name ?? m.model ?? "") === wanted,
  );
  if (!entry) return undefined;
  const vram = entry.size_vram ?? 0;
  if (vram <= 0) return "cpu";
  return vram >= entry.size ? "gpu" : "partial";
}

/** Loads the model with an empty prompt; its load_duration in ms, or null. */
async function loadModel(
  base: string,
  model: string,
  options: OllamaOptions & { numCtx: number },
): Promise<number | null> {
  const { fetch: doFetch = globalThis.fetch, timeoutMs = 120_000 } = options;
  const response = await doFetch(`${base}/api/generate`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model,
      prompt: "",
      stream: false,
      options: { num_ctx: options.numCtx },
    }),
    signal: withTimeout(timeoutMs, options.signal),
  });
  const body = safeJson(await readTextCapped(response, options.maxBytes ?? OLLAMA_MAX_BYTES));
  const nanos = record(body).load_duration;
  return typeof nanos === "number" && nanos >= 0 ? nanos / 1e6 : null;
}

// What an OpenAI-compatible server answers to GET /v1/models, enough to tell it from Ollama.
const openAiModelList = z.object({ data: z.array(z.unknown()) });

/**
 * The OpenAI-compatible base URL a server given as Ollama's answers on (`{url}/v1/models`, or
 * `{url}/models` when it already ends in /v1), for the fix when --api=ollama was meant as
 * --api=openai; undefined when it does not answer so. A 401 counts: the server wants a key.
 */
async function openAiBaseAt(
  url: string,
  options: Pick<OllamaOptions, "fetch" | "timeoutMs" | "signal"> = {},
): Promise<string | undefined> {
  const { fetch: doFetch = globalThis.fetch, timeoutMs = 10_000 } = options;
  const base = url.endsWith("/v1") ? url : `${url}/v1`;
  try {
    const response = await doFetch(`${base}/models`, {
      signal: withTimeout(timeoutMs, options.signal),
    });
    const body = safeJson(await readTextCapped(response, 1024 * 1024));
    if (response.status === 401 || openAiModelList.safeParse(body).success) return base;
  } catch {
    // Nothing there either: the Ollama message stands alone.
  }
  return undefined;
}
