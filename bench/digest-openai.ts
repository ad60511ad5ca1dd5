/**
 * The budget rows of bench:digest again, through an OpenAI-compatible server: a fake
 * llama-server reporting the machine's `timings`, and a server reporting none (LM Studio, vLLM),
 * measured by each call's duration on the fake's clock. Same front page, tokens and rates.
 */
import { loadDigestConfig } from "../lib/digest/config.ts";
import { runDigest } from "../lib/digest/digest.ts";
import { startDigestWorld } from "../tests/fakes/digest-world.ts";
import { frontPageToday } from "../tests/fakes/front-page-today.ts";
import {
  type BudgetRun,
  budgetRunOf,
  llama3Tokens,
  quietOutput,
  type Rates,
} from "./digest-budget.ts";

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
  await runDigest(config, { ...quietOutput(), now: server.now });
  return budgetRunOf(rates, server);
}
