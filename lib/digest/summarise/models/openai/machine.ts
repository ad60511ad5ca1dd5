import { estimateTokens } from "../../tokens.ts";
import type { MachineInfo } from "../model-client.ts";
import { record } from "../model-http.ts";
import { chatCall, count, type OpenAiOptions, timingsOf } from "./chat.ts";

/**
 * Prompt tokens a second from which a model is taken to run on a GPU: a CPU reads a 3B model's
 * prompt at 14–60 tokens/s (REFERENCE.md §2), a GPU at thousands. Slower than this, the digest
 * keeps a time budget, as for a model Ollama says is on the CPU or split.
 */
export const GPU_PREFILL_PER_SECOND = 1000;

// About 90 tokens: enough for a rate, a few seconds on a laptop CPU.
const PROBE_TEXT =
  "Hacker News is a social news website focusing on computer science and entrepreneurship. " +
  "It is run by the investment fund and startup incubator Y Combinator. Users submit links " +
  "and text posts, vote on them, and discuss them in threaded comments. Reply with one word.";

/**
 * Where the model runs, as far as an OpenAI-compatible API can tell (it has no /api/ps): one
 * short prompt, answered with a single token, read at a GPU's rate or not. The rate comes from
 * llama-server's `timings`, else from the call's duration. The prompt starts with the time, so
 * a server's prompt cache cannot answer it from an earlier run. Null when the call fails; never
 * throws. Its duration counts as spent (`loadMs`): LM Studio loads the model on this first call.
 */
export async function probeMachine(
  base: string,
  model: string,
  options: OpenAiOptions,
): Promise<MachineInfo | null> {
  const now = options.now ?? (() => performance.now());
  const prompt = `Probe ${now()}. ${PROBE_TEXT}`;
  try {
    const call = await chatCall(base, { model, prompt, maxTokens: 1 }, { ...options, now });
    const usage = record(record(call.body).usage);
    const tokens = count(usage.prompt_tokens) ?? estimateTokens(prompt);
    const timings = timingsOf(record(call.body).timings, tokens, call.wallMs);
    const ms = timings.promptMs ?? call.wallMs;
    if (ms <= 0) return null;
    const rate = (tokens * 1000) / ms;
    return { placement: rate >= GPU_PREFILL_PER_SECOND ? "gpu" : "cpu", loadMs: call.wallMs };
  } catch {
    return null;
  }
}
