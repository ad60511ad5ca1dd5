import type { Api, DigestConfig } from "../../config.ts";
import type { ModelClient } from "./model-client.ts";
import { createOllamaClient } from "./ollama/client.ts";
import { createOpenAiClient } from "./openai/client.ts";

export interface OpenModelOptions {
  fetch?: typeof fetch;
  /** Clock for each call's wall time. */
  now?: () => number;
}

/**
 * The one place that chooses the model API the digest talks to, as lib/store/open.ts chooses a
 * store: Ollama's own API, or an OpenAI-compatible server (--api=openai).
 */
export function openModelClient(
  config: Pick<
    DigestConfig,
    "api" | "ollamaUrl" | "model" | "openaiUrl" | "openaiModel" | "openaiApiKey" | "ollamaTimeoutMs"
  >,
  options: OpenModelOptions = {},
): ModelClient {
  const checkTimeoutMs = Math.min(10_000, config.ollamaTimeoutMs ?? 10_000);
  if (config.api === "openai") {
    return createOpenAiClient({
      url: config.openaiUrl,
      model: config.openaiModel,
      apiKey: config.openaiApiKey,
      fetch: options.fetch,
      now: options.now,
      checkTimeoutMs,
    });
  }
  return createOllamaClient({
    url: config.ollamaUrl,
    model: config.model,
    fetch: options.fetch,
    now: options.now,
    checkTimeoutMs,
  });
}

/**
 * The name summaries are cached under. Ollama's is the model's own (the caches of earlier
 * versions stay valid); another API's is prefixed with it and a space, which no Ollama name
 * has, so a summary Ollama wrote is never served as a llama-server one of the same name.
 */
export function cachedModelName(api: Api, model: string): string {
  return api === "ollama" ? model : `${api} ${model}`;
}
