/**
 * A fake OpenAI-compatible server on 127.0.0.1, port 0, shaped like llama.cpp's `llama-server`:
 * `GET /v1/models`, non-streamed `POST /v1/chat/completions` with `usage` (and llama-server's
 * `timings` unless `timings: false`), `GET /props` with the slot's context, a 401 without the key
 * when one is configured, a 404 for a model it does not list, and a 400 for a prompt longer than
 * its context. Token counts are characters / 4, rounded up, unless a modelled machine counts them.
 */
import type { ModelledCall, ModelledMachine } from "./ollama.ts";
import { promptKind } from "./ollama.ts";

export interface ChatBody {
  model: string;
  messages: { role: string; content: string }[];
  stream?: boolean;
  max_tokens?: number;
  temperature?: number;
}

export type ChatAnswer = string | Response;

export interface FakeOpenAiOptions {
  /** Ids /v1/models lists, in order (default one llama-server id). */
  models?: string[];
  /** When set, every request must carry `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /** The answer to one chat call: the message text, or a whole Response (errors). */
  complete?: (body: ChatBody, call: number) => ChatAnswer | Promise<ChatAnswer>;
  /** Reports llama-server's `timings` (default true). */
  timings?: boolean;
  /** Rates the timings report, tokens per second (default 24 prefill, 11 decode: a laptop CPU). */
  promptPerSecond?: number;
  predictedPerSecond?: number;
  /** The slot's context (/props `n_ctx`); a longer prompt is refused with a 400 (default 8192). */
  contextTokens?: number;
  /** Serves /props (default true; vLLM and LM Studio have none). */
  props?: boolean;
  /** Answers /v1/models instead of the default (e.g. a 500, or an endless body). */
  modelsResponse?: () => Response;
  /**
   * A modelled machine: each answer takes the durations this machine would (in `timings`, unless
   * `timings: false`), and the fake's clock (`now`, `modelledMs`) moves by them. Nothing waits.
   * Its `loadMs` is not used: these servers load the model before they listen.
   */
  machine?: ModelledMachine;
  /** Stops listening after answering this many chat calls (a probe included): the server gone. */
  stopAfter?: number;
}

export interface FakeOpenAi {
  /** The base URL, ending in /v1, as OPENAI_BASE_URL takes it. */
  url: string;
  /** Every request, whatever its path: `GET /v1/models`, `POST /v1/chat/completions`, … */
  requests: string[];
  chatCalls: ChatBody[];
  modelsCalls: number;
  propsCalls: number;
  /** The Authorization header of every request, in order ("" when none). */
  authorizations: string[];
  /** Answered chat calls as the modelled machine took them. */
  modelled: ModelledCall[];
  /** Sum of the modelled durations of every answer (ms). */
  modelledMs: number;
  /** The fake clock: a fixed start plus modelledMs. */
  now(): number;
  stop(): void;
  [Symbol.dispose](): void;
}

export const DEFAULT_OPENAI_MODEL = "Llama-3.2-3B-Instruct-Q4_K_M.gguf";

export function fakeTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** The default answer names the story, so tests can tell summaries apart. */
export function echoChatTitle(body: ChatBody): string {
  const prompt = body.messages.at(-1)?.content ?? "";
  const title = /^(?:Title|Story): (.*)$/m.exec(prompt)?.[1] ?? "?";
  return `Summary of the ${promptKind(prompt)} of ${title}.`;
}

const CLOCK_START = Date.parse("2026-11-25T14:53:53Z");

function openAiError(status: number, message: string, extra: Record<string, unknown> = {}) {
  return Response.json({ error: { code: status, message, ...extra } }, { status });
}

export function startFakeOpenAi(options: FakeOpenAiOptions = {}): FakeOpenAi {
  const models = options.models ?? [DEFAULT_OPENAI_MODEL];
  const contextTokens = options.contextTokens ?? 8192;
  const state: FakeOpenAi = {
    url: "",
    requests: [],
    chatCalls: [],
    modelsCalls: 0,
    propsCalls: 0,
    authorizations: [],
    modelled: [],
    modelledMs: 0,
    now: () => CLOCK_START + state.modelledMs,
    stop: () => server.stop(true),
    [Symbol.dispose]: () => server.stop(true),
  };
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const url = new URL(request.url);
      state.requests.push(`${request.method} ${url.pathname}`);
      const authorization = request.headers.get("authorization") ?? "";
      state.authorizations.push(authorization);
      if (options.apiKey !== undefined && authorization !== `Bearer ${options.apiKey}`) {
        return openAiError(401, "Invalid API Key", { type: "authentication_error" });
      }
      if (url.pathname === "/v1/models" && request.method === "GET") {
        state.modelsCalls++;
        if (options.modelsResponse) return options.modelsResponse();
        return Response.json({
          object: "list",
          data: models.map((id) => ({
            id,
            object: "model",
            created: 1764000000,
            owned_by: "llamacpp",
            meta: { n_ctx_train: 131072, n_vocab: 128256 },
          })),
        });
      }
      if (url.pathname === "/props" && request.method === "GET" && options.props !== false) {
        state.propsCalls++;
        return Response.json({
          default_generation_settings: { n_ctx: contextTokens, params: { temperature: 0.8 } },
          total_slots: 1,
          model_path: `/models/${models[0] ?? ""}`,
        });
      }
      if (url.pathname !== "/v1/chat/completions" || request.method !== "POST") {
        return openAiError(404, "File Not Found", { type: "not_found_error" });
      }
      const body = (await request.json()) as ChatBody;
      const call = state.chatCalls.push(body);
      if (!models.includes(body.model)) {
        return openAiError(404, `The model \`${body.model}\` does not exist.`, {
          type: "not_found_error",
        });
      }
      const count = options.machine?.countTokens ?? fakeTokens;
      const promptTokens = count(body.messages.map((m) => m.content).join("\n"));
      if (promptTokens > contextTokens) {
        return openAiError(
          400,
          "the request exceeds the available context size, try increasing it",
          {
            type: "exceed_context_size_error",
            n_prompt_tokens: promptTokens,
            n_ctx: contextTokens,
          },
        );
      }
      const answer = await (options.complete ?? echoChatTitle)(body, call);
      if (call === options.stopAfter) server.stop();
      if (typeof answer !== "string") return answer;
      const outputTokens = Math.min(
        options.machine
          ? typeof options.machine.answerTokens === "number"
            ? options.machine.answerTokens
            : 150
          : fakeTokens(answer),
        body.max_tokens ?? Infinity,
      );
      const promptRate = options.machine?.prefillPerSecond ?? options.promptPerSecond ?? 24;
      const outputRate = options.machine?.decodePerSecond ?? options.predictedPerSecond ?? 11;
      if (options.machine) {
        const ms = (promptTokens / promptRate + outputTokens / outputRate) * 1000;
        state.modelled.push({ promptTokens, answerTokens: outputTokens, ms });
        state.modelledMs += ms;
      }
      return Response.json({
        id: `chatcmpl-${call}`,
        object: "chat.completion",
        created: 1764000000,
        model: body.model,
        choices: [
          {
            index: 0,
            message: { role: "assistant", content: answer },
            finish_reason: outputTokens === body.max_tokens ? "length" : "stop",
          },
        ],
        usage: {
          prompt_tokens: promptTokens,
          completion_tokens: outputTokens,
          total_tokens: promptTokens + outputTokens,
        },
        ...(options.timings === false
          ? {}
          : {
              timings: {
                prompt_n: promptTokens,
                prompt_ms: (promptTokens / promptRate) * 1000,
                prompt_per_token_ms: 1000 / promptRate,
                prompt_per_second: promptRate,
                predicted_n: outputTokens,
                predicted_ms: (outputTokens / outputRate) * 1000,
                predicted_per_token_ms: 1000 / outputRate,
                predicted_per_second: outputRate,
              },
            }),
      });
    },
  });
  state.url = `http://127.0.0.1:${server.port}/v1`;
  return state;
}
