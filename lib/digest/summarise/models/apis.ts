/**
 * The model APIs the digest speaks, one row each: what --api / LLM_API calls it, its settings
 * (each with a variable of its own), the name its summaries are cached under, and the factory of
 * its ModelClient (whose preflight checks the server before the run). lib/digest/config.ts writes
 * the settings' fields from this table and open-model.ts opens the row --api names. Adding an API
 * is its folder beside ollama/ and openai/, and one row here.
 */
import type { ModelClient } from "./model-client.ts";
import { createOllamaClient } from "./ollama/client.ts";
import { createOpenAiClient } from "./openai/client.ts";

/** The chosen API's settings, as the config resolved them. */
export interface ModelServer {
  url: string;
  /** --model, else the API's own variable, else its default; undefined lets the server choose. */
  model: string | undefined;
  /** Sent as a Bearer token where the API has one; never shown. */
  apiKey: string | undefined;
  /** Ceiling of one model call's timeout (ms); none when unset. */
  timeoutMs: number | undefined;
}

export interface OpenModelOptions {
  fetch?: typeof fetch;
  /** Clock for each call's wall time. */
  now?: () => number;
  /** Timeout of the checks before the run. */
  checkTimeoutMs: number;
}

export interface ModelApi {
  /** How messages name the server's kind: "Ollama", "OpenAI-compatible server". */
  label: string;
  url: { env: string; flag: string; default: string; description: string };
  /** The API's own variable naming the model; --model beats it. */
  model: { env: string; default?: string; defaultText?: string };
  /** The variable of a key the server may want, when the API has one. */
  apiKey?: { env: string };
  timeout: { env: string; flag: string };
  /**
   * Prefix of the names its summaries are cached under, ending in a space, which no model name
   * has; "" for Ollama, whose earlier caches stay valid.
   */
  cachePrefix: string;
  open(server: ModelServer, options: OpenModelOptions): ModelClient;
}

export const DEFAULT_OLLAMA_MODEL = "llama3.2";

export const MODEL_APIS = {
  ollama: {
    label: "Ollama",
    url: {
      env: "OLLAMA_ENDPOINT_URL",
      flag: "ollama-url",
      default: "http://localhost:11434",
      description: "Ollama base URL",
    },
    model: { env: "OLLAMA_MODEL", default: DEFAULT_OLLAMA_MODEL },
    timeout: { env: "OLLAMA_TIMEOUT_MS", flag: "ollama-timeout-ms" },
    cachePrefix: "",
    open: (server, options) =>
      createOllamaClient({ ...options, url: server.url, model: server.model ?? "" }),
  },
  openai: {
    label: "OpenAI-compatible server",
    url: {
      env: "OPENAI_BASE_URL",
      flag: "openai-url",
      default: "http://localhost:8080/v1",
      description: "OpenAI-compatible server's base URL, with its /v1 (used with --api=openai)",
    },
    model: { env: "OPENAI_MODEL", defaultText: "the first model the server lists" },
    apiKey: { env: "OPENAI_API_KEY" },
    timeout: { env: "OPENAI_TIMEOUT_MS", flag: "openai-timeout-ms" },
    cachePrefix: "openai ",
    open: (server, options) =>
      createOpenAiClient({
        ...options,
        url: server.url,
        model: server.model,
        apiKey: server.apiKey,
      }),
  },
} as const satisfies Record<string, ModelApi>;

/** Which API the model server speaks: a key of MODEL_APIS. */
export type Api = keyof typeof MODEL_APIS;
export const APIS = Object.keys(MODEL_APIS) as Api[];
