import type { DigestConfig } from "../config.ts";
import type { ModelClient } from "./model-client.ts";
import { createOllamaClient } from "./ollama-client.ts";

export interface OpenModelOptions {
  fetch?: typeof fetch;
  /** Clock for each call's wall time. */
  now?: () => number;
}

/**
 * The one place that chooses the model API the digest talks to, as lib/store/open.ts chooses a
 * store. Today: Ollama's own API.
 */
export function openModelClient(
  config: Pick<DigestConfig, "ollamaUrl" | "model" | "ollamaTimeoutMs">,
  options: OpenModelOptions = {},
): ModelClient {
  return createOllamaClient({
    url: config.ollamaUrl,
    model: config.model,
    fetch: options.fetch,
    now: options.now,
    checkTimeoutMs: Math.min(10_000, config.ollamaTimeoutMs),
  });
}
