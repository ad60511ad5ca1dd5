/**
 * The budget rows of bench:digest again, through an OpenAI-compatible server: a fake
 * llama-server reporting the machine's `timings`, and a server reporting none (LM Studio, vLLM),
 * measured by each call's duration on the fake's clock. Same front page, tokens and rates.
 */
import { loadDigestConfig } from "../lib/digest/config.ts";
import { runDigest } from "../lib/digest/digest.ts";
import { createMemoryLogger } from "../lib/log.ts";
import { startDigestWorld } from "../tests/fakes/digest-world.ts";
import { frontPageToday } from "../tests/fakes/front-page-today.ts";
import { type BudgetRun, llama3Tokens, type Rates } from "./digest-budget.ts";

export async function measureOpenAiBudget(
  rates: Rates,
  options: { timings: boolean },
): Promise<BudgetRun> {
  using world = startDigestWorld({
    ...frontPageToday(),
    openai: {
      timings: options.timings,
      // The window Ollama is asked for by default, so the rows compare like for like.
      contextTokens: 8192,
      machine: { ...rates, answerTokens: 150, countTokens: llama3Tokens },
    },
  });
  const server = world.openai;
  if (!server) throw new Error("no OpenAI-compatible server");
  const config = loadDigestConfig(world.env, { cache: false });
  const quiet = { stdout: { write() {} }, stderr: { write() {} }, logger: createMemoryLogger() };
  await runDigest(config, { ...quiet, now: server.now });
  const calls = server.modelled;
  const largest = calls.reduce((a, b) => (b.ms > a.ms ? b : a), { promptTokens: 0, ms: 0 });
  return {
    rates,
    calls: calls.length,
    promptTokens: calls.reduce((sum, call) => sum + call.promptTokens, 0),
    modelledMinutes: server.modelledMs / 60_000,
    largestCallSeconds: largest.ms / 1000,
    largestCallTokens: largest.promptTokens,
    callsOver300s: calls.filter((call) => call.ms > 300_000).length,
  };
}
