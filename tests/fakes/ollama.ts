/**
 * A fake Ollama on 127.0.0.1, port 0: `GET /api/tags`, `POST /api/show`, `GET /api/ps` and
 * non-streamed `POST /api/generate` with the bodies Ollama sends (an empty prompt only loads the
 * model). It records every generate request, how many ran at once, and the time it spent
 * generating.
 */

export interface GenerateBody {
  model: string;
  prompt: string;
  stream: boolean;
  options?: { num_ctx?: number; num_predict?: number };
}

export type GenerateAnswer = string | Response;

export interface FakeOllamaOptions {
  /** Names listed by /api/tags. */
  models?: string[];
  /** The answer to one generate call: a `response` text, or a whole Response (errors). */
  generate?: (body: GenerateBody, call: number) => GenerateAnswer | Promise<GenerateAnswer>;
  /** Fixed time each generate call takes (benchmark only). */
  delayMs?: number;
  /** Answers /api/tags instead of the default (e.g. a 500). */
  tags?: () => Response;
  /** The context length /api/show reports (default 131072); null leaves it out. */
  contextLength?: number | null;
  /** Answers /api/show instead of the default (e.g. a 404 of an old Ollama). */
  show?: () => Response;
  /** Where /api/ps says a loaded model runs (default "gpu"); null: /api/ps answers 404. */
  placement?: "cpu" | "gpu" | "partial" | null;
  /** The model is loaded before the first request (default false: the first request loads it). */
  loaded?: boolean;
  /**
   * A modelled machine: each answer reports the token counts and durations this machine would
   * take, and the fake's clock (`now`, `modelledMs`) moves by them. Nothing waits.
   */
  machine?: ModelledMachine;
  /** Ollama stops (stops listening) after answering this many generate calls. */
  stopAfter?: number;
}

export interface ModelledMachine {
  prefillPerSecond: number;
  decodePerSecond: number;
  /**
   * Tokens each answer takes (eval_count), at most num_predict; default 150. A function gives
   * the tokens the model would write for that request (say, the words its instruction asks for
   * at a language's tokens per word): an answer that wants more than num_predict is cut there,
   * with done_reason "length", as Ollama does.
   */
  answerTokens?: number | ((body: GenerateBody) => number);
  /** Loading the model, on the first request (ms); default 3000. */
  loadMs?: number;
  /** A prompt's tokens (default 4 characters a token); at most num_ctx, as Ollama truncates. */
  countTokens?: (text: string) => number;
  /**
   * Ollama's prefix cache: the tokens a prompt shares with the one before are not read again
   * (prompt_eval_count still counts the whole prompt, prompt_eval_duration only what was read).
   */
  prefixCache?: boolean;
}

/** One answered generate call as the modelled machine took it. */
export interface ModelledCall {
  promptTokens: number;
  answerTokens: number;
  ms: number;
}

export interface FakeOllama {
  url: string;
  /** Every request, whatever its path: `GET /api/tags`, `POST /api/generate`, … */
  requests: string[];
  generateCalls: GenerateBody[];
  tagsCalls: number;
  /** Model names asked of /api/show. */
  showCalls: string[];
  /** Generate requests with an empty prompt: a model load, recorded here, not in generateCalls. */
  loadCalls: GenerateBody[];
  psCalls: number;
  maxInFlight: number;
  /** Milliseconds during which at least one generate call was running. */
  busyMs: number;
  /** Answered generate calls, with what the modelled machine (or the fixed default body) took. */
  modelled: ModelledCall[];
  /** Sum of the modelled durations of every answer and load (ms). */
  modelledMs: number;
  /** The fake clock: a fixed start plus modelledMs. */
  now(): number;
  stop(): void;
  [Symbol.dispose](): void;
}

/** A success body as Ollama sends it (durations in nanoseconds). */
export function generateSuccess(model: string, response: string): Record<string, unknown> {
  return {
    model,
    created_at: "2025-08-03T18:54:41.2149398Z",
    response,
    done: true,
    done_reason: "stop",
    context: [151644, 8948],
    total_duration: 3065182500,
    load_duration: 2175701100,
    prompt_eval_count: 28,
    prompt_eval_duration: 138610200,
    eval_count: 25,
    eval_duration: 749857300,
  };
}

/** Which summary a prompt asks for, by its task line (after the instruction all prompts share). */
export function promptKind(prompt: string): "article" | "discussion" {
  return /^Summarise the article below/m.test(prompt) ? "article" : "discussion";
}

/** The default answer names the story, so tests can tell summaries apart. */
export function echoTitle(body: GenerateBody): string {
  const title = /^(?:Title|Story): (.*)$/m.exec(body.prompt)?.[1] ?? "?";
  return `Summary of the ${promptKind(body.prompt)} of ${title}.`;
}

export function startFakeOllama(options: FakeOllamaOptions = {}): FakeOllama {
  const models = options.models ?? ["llama3.2:latest"];
  let inFlight = 0;
  let loaded = options.loaded ?? false;
  const placement = options.placement === undefined ? "gpu" : options.placement;
  let busySince = 0;
  // What the model's one slot holds in its KV cache: the last prompt it read.
  let lastPrompt = "";
  const state: FakeOllama = {
    url: "",
    requests: [],
    generateCalls: [],
    tagsCalls: 0,
    showCalls: [],
    loadCalls: [],
    psCalls: 0,
    maxInFlight: 0,
    busyMs: 0,
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
      if (url.pathname === "/api/tags" && request.method === "GET") {
        state.tagsCalls++;
        if (options.tags) return options.tags();
        return Response.json({
          models: models.map((name) => ({
            name,
            model: name,
            modified_at: "2025-08-01T10:00:00Z",
            size: 2019393189,
            digest: "a80c4f17acd55265feec403c7aef86be0c25983ab279d83f3bcd3abbcb5b8b72",
            details: { format: "gguf", family: "llama", parameter_size: "3.2B" },
          })),
        });
      }
      if (url.pathname === "/api/show" && request.method === "POST") {
        const { model } = (await request.json()) as { model: string };
        state.showCalls.push(model);
        if (options.show) return options.show();
        const length = options.contextLength === undefined ? 131072 : options.contextLength;
        return Response.json({
          license: "LLAMA 3.2 COMMUNITY LICENSE AGREEMENT …",
          modelfile: `FROM ${model}`,
          parameters: 'stop "<|eot_id|>"',
          template: "{{ .Prompt }}",
          details: { format: "gguf", family: "llama", parameter_size: "3.2B" },
          model_info: {
            "general.architecture": "llama",
            "general.parameter_count": 3212749888,
            ...(length === null ? {} : { "llama.context_length": length }),
            "llama.embedding_length": 3072,
          },
          capabilities: ["completion", "tools"],
        });
      }
      if (url.pathname === "/api/ps" && request.method === "GET") {
        state.psCalls++;
        if (placement === null) return new Response("404 page not found", { status: 404 });
        return Response.json({ models: loaded ? [runningModel(models[0] ?? "", placement)] : [] });
      }
      if (url.pathname !== "/api/generate" || request.method !== "POST") {
        return new Response("404 page not found", { status: 404 });
      }
      const body = (await request.json()) as GenerateBody;
      if (body.prompt === "" && models.includes(normalise(body.model))) {
        state.loadCalls.push(body);
        const loadMs = loaded ? 0 : (options.machine?.loadMs ?? 3000);
        loaded = true;
        state.modelledMs += loadMs;
        return Response.json(loadAnswer(body.model, loadMs));
      }
      const cold = !loaded;
      loaded = true;
      const call = state.generateCalls.push(body);
      if (inFlight === 0) busySince = performance.now();
      inFlight++;
      state.maxInFlight = Math.max(state.maxInFlight, inFlight);
      try {
        if (options.delayMs) await Bun.sleep(options.delayMs);
        if (!models.includes(body.model) && !models.includes(`${body.model}:latest`)) {
          return Response.json({ error: `model '${body.model}' not found` }, { status: 404 });
        }
        const answer = await (options.generate ?? echoTitle)(body, call);
        if (typeof answer !== "string") return answer;
        const success = options.machine
          ? modelledSuccess(body, answer, options.machine, { cold, previous: lastPrompt })
          : generateSuccess(body.model, answer);
        lastPrompt = body.prompt;
        const took = modelledCall(success);
        state.modelled.push(took);
        state.modelledMs += took.ms;
        // Not forced: this answer still goes out, the next connection is refused.
        if (call === options.stopAfter) server.stop();
        return Response.json(success);
      } finally {
        inFlight--;
        if (inFlight === 0) state.busyMs += performance.now() - busySince;
      }
    },
  });
  state.url = `http://127.0.0.1:${server.port}`;
  return state;
}

const CLOCK_START = Date.parse("2025-08-03T18:54:41Z");

/** A success body with the counts and durations `machine` would report for this prompt. */
function modelledSuccess(
  body: GenerateBody,
  response: string,
  machine: ModelledMachine,
  slot: { cold: boolean; previous: string },
): Record<string, unknown> {
  const { cold } = slot;
  const count = machine.countTokens ?? ((text: string) => Math.ceil(text.length / 4));
  const promptTokens = Math.min(count(body.prompt), body.options?.num_ctx ?? Infinity);
  const cached = machine.prefixCache ? sharedTokens(body.prompt, slot.previous, count) : 0;
  const readTokens = Math.max(1, promptTokens - cached);
  const wanted =
    typeof machine.answerTokens === "function"
      ? machine.answerTokens(body)
      : (machine.answerTokens ?? 150);
  const limit = body.options?.num_predict ?? Infinity;
  const answerTokens = Math.min(wanted, limit);
  // A fixed length is the fake's default, never a cut; a wanted one stops at the limit.
  const cut = typeof machine.answerTokens === "function" && wanted > limit;
  const promptNs = Math.round((readTokens / machine.prefillPerSecond) * 1e9);
  const answerNs = Math.round((answerTokens / machine.decodePerSecond) * 1e9);
  const loadNs = cold ? (machine.loadMs ?? 3000) * 1e6 : 0;
  return {
    ...generateSuccess(body.model, response),
    ...(cut ? { done_reason: "length" } : {}),
    total_duration: promptNs + answerNs + loadNs,
    load_duration: loadNs,
    prompt_eval_count: promptTokens,
    prompt_eval_duration: promptNs,
    eval_count: answerTokens,
    eval_duration: answerNs,
  };
}

/** Tokens of the longest prefix two prompts share, up to the last line break both hold. */
function sharedTokens(prompt: string, previous: string, count: (text: string) => number): number {
  let same = 0;
  while (same < prompt.length && prompt[same] === previous[same]) same++;
  const lineEnd = prompt.lastIndexOf("\n", same);
  return lineEnd <= 0 ? 0 : count(prompt.slice(0, lineEnd));
}

function modelledCall(success: Record<string, unknown>): ModelledCall {
  const number = (key: string) => (typeof success[key] === "number" ? success[key] : 0);
  return {
    promptTokens: number("prompt_eval_count"),
    answerTokens: number("eval_count"),
    ms: (number("prompt_eval_duration") + number("eval_duration") + number("load_duration")) / 1e6,
  };
}

function normalise(model: string): string {
  return model.includes(":") ? model : `${model}:latest`;
}

const MODEL_BYTES = 3_369_482_240;

/** An /api/ps entry: size_vram 0 on the CPU, all of `size` on the GPU. */
export function runningModel(name: string, placement: "cpu" | "gpu" | "partial") {
  const vram = { cpu: 0, gpu: MODEL_BYTES, partial: Math.round(MODEL_BYTES * 0.4) }[placement];
  return {
    name,
    model: name,
    size: MODEL_BYTES,
    digest: "a80c4f17acd55265feec403c7aef86be0c25983ab279d83f3bcd3abbcb5b8b72",
    details: { format: "gguf", family: "llama", parameter_size: "3.2B" },
    expires_at: "2025-08-03T19:59:41.2149398Z",
    size_vram: vram,
  };
}

/** Ollama's answer to an empty prompt: the model loaded, nothing generated. */
function loadAnswer(model: string, loadMs: number) {
  return {
    model,
    created_at: "2025-08-03T18:54:41.2149398Z",
    response: "",
    done: true,
    done_reason: "load",
    total_duration: loadMs * 1e6 + 10_000_000,
    load_duration: loadMs * 1e6,
  };
}
