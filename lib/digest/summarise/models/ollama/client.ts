import type { ModelClient } from "../model-client.ts";
import { generate, OLLAMA_MAX_BYTES } from "./generate.ts";
import { machineInfo, preflight } from "./preflight.ts";

export interface OllamaClientOptions {
  url: string;
  model: string;
  fetch?: typeof fetch;
  /** Answers larger than this fail; default OLLAMA_MAX_BYTES. */
  maxBytes?: number;
  /** Clock for each call's wall time. */
  now?: () => number;
  /** Timeout of the checks before the run (preflight, /api/ps); default 10 s. */
  checkTimeoutMs?: number;
  /** Timeout of loading the model before the first prompt; default 120 s. */
  loadTimeoutMs?: number;
}

/** The ModelClient over Ollama's own API: /api/tags, /api/show, /api/ps, /api/generate. */
export function createOllamaClient(options: OllamaClientOptions): ModelClient {
  const { url, model } = options;
  const common = { fetch: options.fetch, maxBytes: options.maxBytes ?? OLLAMA_MAX_BYTES };
  const checkTimeoutMs = options.checkTimeoutMs ?? 10_000;
  return {
    describe: `Ollama at ${url}`,
    preflight: async (signal) => ({
      model,
      ...(await preflight(url, model, { ...common, timeoutMs: checkTimeoutMs, signal })),
    }),
    generate: (request, call) =>
      generate(
        url,
        { model, ...request },
        { ...common, now: options.now, timeoutMs: call.timeoutMs, signal: call.signal },
      ),
    machine: ({ numCtx, signal }) =>
      machineInfo(url, model, {
        ...common,
        numCtx,
        signal,
        timeoutMs: options.loadTimeoutMs ?? 120_000,
      }),
  };
}
