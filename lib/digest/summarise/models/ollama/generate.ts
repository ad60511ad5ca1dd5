import { stripControl } from "../../../../text/control.ts";
import { BodyTooLargeError, formatBytes, readTextCapped } from "../../../fetch/body.ts";
import { type ModelAnswer, ModelError } from "../model-client.ts";
import {
  callFailureKind,
  describeError,
  errorText,
  oneLine,
  record,
  safeJson,
  stripThinking,
  withTimeout,
} from "../model-http.ts";

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
  /** Stops the call (Ctrl-C). */
  signal?: AbortSignal;
  /** Clock for the call's wall time. */
  now?: () => number;
}

export interface GenerateInput {
  model: string;
  prompt: string;
  /** Context window asked for (options.num_ctx). */
  numCtx: number;
  /** Most tokens the answer may take (options.num_predict). */
  numPredict: number;
}

/**
 * The request for one non-streamed generation, as a plain value. num_ctx is always sent: an
 * Ollama left at its own default (2048 or 4096) would silently drop the front of a longer
 * prompt, which is where the instruction is.
 */
export function generateRequest(
  base: string,
  input: GenerateInput,
): { url: string; init: RequestInit & { body: string } } {
  const body = {
    model: input.model,
    prompt: input.prompt,
    stream: false,
    options: { num_ctx: input.numCtx, num_predict: input.numPredict },
  };
  return {
    url: `${base}/api/generate`,
    init: {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    },
  };
}

/**
 * Asks Ollama for one completion. Both a non-2xx `{error}` and a 200 carrying `{error}` are
 * failures (ModelError, its kind saying whether the model is gone), and so is an answer larger
 * than `maxBytes`.
 */
export async function generate(
  base: string,
  input: GenerateInput,
  options: OllamaOptions = {},
): Promise<ModelAnswer> {
  const {
    fetch: doFetch = globalThis.fetch,
    timeoutMs = 300_000,
    maxBytes = OLLAMA_MAX_BYTES,
    now = performance.now.bind(performance),
  } = options;
  const { url, init } = generateRequest(base, input);
  const started = now();
  let response: Response;
  let text: string;
  try {
    response = await doFetch(url, { ...init, signal: withTimeout(timeoutMs, options.signal) });
    text = await readTextCapped(response, maxBytes);
  } catch (error) {
    if (error instanceof BodyTooLargeError) {
      throw new ModelError(
        `Ollama's answer is larger than ${formatBytes(maxBytes)}; stopped reading it`,
        "bad-answer",
      );
    }
    throw new ModelError(
      `Ollama did not answer at ${url} (${describeError(error, timeoutMs, url)})`,
      callFailureKind(error, options.signal),
      `Start Ollama with \`ollama serve\`, or point OLLAMA_ENDPOINT_URL / --ollama-url at a running one.`,
    );
  }
  const body = safeJson(text);
  const error = errorText(body);
  if (!response.ok) throw statusError(response.status, error ?? oneLine(text), input.model);
  if (error !== undefined) {
    throw new ModelError(`Ollama reported an error: ${error}`, "bad-answer");
  }
  const fields = record(body);
  if (typeof fields.response !== "string") {
    throw new ModelError("Ollama's answer has no response text", "bad-answer");
  }
  const answer = stripControl(stripThinking(fields.response));
  if (answer === "") throw new ModelError("Ollama's answer was empty", "bad-answer");
  return {
    text: answer,
    doneReason: typeof fields.done_reason === "string" ? fields.done_reason : null,
    promptTokens: count(fields.prompt_eval_count),
    answerTokens: count(fields.eval_count),
    timings: {
      promptMs: nanosToMs(fields.prompt_eval_duration),
      answerMs: nanosToMs(fields.eval_duration),
      loadMs: nanosToMs(fields.load_duration),
      wallMs: now() - started,
    },
  };
}

/** A non-2xx answer: a missing model (404 "not found") and 5xx mean the model cannot answer. */
function statusError(status: number, detail: string, model: string): ModelError {
  const message = `Ollama answered HTTP ${status}: ${detail || "no detail"}`;
  if (status === 404 && /not found/i.test(detail)) {
    return new ModelError(
      `${message}; run \`ollama pull ${model}\``,
      "missing-model",
      `Run \`ollama pull ${model}\`, or choose another model with --model / OLLAMA_MODEL.`,
      message,
    );
  }
  if (status >= 500) {
    return new ModelError(
      message,
      "server",
      "Ollama fails on every request: look at its log (`journalctl -u ollama`, or the terminal running `ollama serve`) and restart it.",
    );
  }
  return new ModelError(message, status === 429 ? "busy" : "rejected");
}

function count(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : null;
}

function nanosToMs(value: unknown): number | null {
  const nanos = count(value);
  return nanos === null ? null : nanos / 1e6;
}
