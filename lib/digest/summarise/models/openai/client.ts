import type { ModelClient } from "../model-client.ts";
import { chatComplete, OPENAI_MAX_BYTES } from "./chat.ts";
import { probeMachine } from "./machine.ts";
import { openAiPreflight } from "./preflight.ts";

export interface OpenAiClientOptions {
  /** The base URL, ending in /v1 as a rule. */
  url: string;
  /** The model named by --model / OPENAI_MODEL; undefined takes the first the server lists. */
  model: string | undefined;
  apiKey?: string;
  fetch?: typeof fetch;
  /** Answers larger than this fail; default OPENAI_MAX_BYTES. */
  maxBytes?: number;
  /** Clock for each call's wall time. */
  now?: () => number;
  /** Timeout of the checks before the run (/v1/models, /props); default 10 s. */
  checkTimeoutMs?: number;
  /** Timeout of the probe that tells where the model runs (it may load the model); default 120 s. */
  loadTimeoutMs?: number;
}

/**
 * The ModelClient over an OpenAI-compatible server (llama-server, LM Studio, vLLM, Ollama's
 * /v1): /v1/models, /v1/chat/completions. The model is known after preflight. Where the model
 * runs is not something this API says, so there is no `machine`.
 */
export function createOpenAiClient(options: OpenAiClientOptions): ModelClient {
  const { url, apiKey } = options;
  const common = { fetch: options.fetch, apiKey, maxBytes: options.maxBytes ?? OPENAI_MAX_BYTES };
  let model = options.model;
  return {
    describe: `the OpenAI-compatible server at ${url}`,
    async preflight(signal) {
      const facts = await openAiPreflight(url, options.model, {
        ...common,
        timeoutMs: options.checkTimeoutMs ?? 10_000,
        signal,
      });
      model = facts.model;
      return { model: facts.model, contextLength: facts.contextLength };
    },
    generate(request, call) {
      return chatComplete(
        url,
        // Before preflight (never in a digest) the name is sent as given; the server decides.
        { model: model ?? "", prompt: request.prompt, maxTokens: request.numPredict },
        { ...common, now: options.now, timeoutMs: call.timeoutMs, signal: call.signal },
      );
    },
    async machine({ signal }) {
      if (model === undefined) return null;
      return probeMachine(url, model, {
        ...common,
        now: options.now,
        timeoutMs: options.loadTimeoutMs ?? 120_000,
        signal,
      });
    },
  };
}
