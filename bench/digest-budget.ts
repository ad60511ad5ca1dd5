/**
 * What a default digest of today's front page costs a reader's machine: run against a fake
 * Ollama that models a machine's rates (no waiting), prompts counted with the real Llama 3
 * tokenizer. Modelled minutes are the sum of the durations the fake reports at those rates.
 */
import llama3Tokenizer from "llama3-tokenizer-js";
import { loadDigestConfig } from "../lib/digest/config.ts";
import { runDigest } from "../lib/digest/digest.ts";
import { createMemoryLogger } from "../lib/log.ts";
import { startDigestWorld } from "../tests/fakes/digest-world.ts";
import { frontPageToday } from "../tests/fakes/front-page-today.ts";

export interface Rates {
  label: string;
  placement: "cpu" | "gpu";
  prefillPerSecond: number;
  decodePerSecond: number;
}

/** Published llama.cpp figures for llama3.2 3B Q4_K_M: an i3-1315U laptop, an RTX 4090. */
export const MACHINES: readonly Rates[] = [
  { label: "CPU 24/11 tok/s", placement: "cpu", prefillPerSecond: 24, decodePerSecond: 11 },
  {
    label: "GPU 20000/200 tok/s",
    placement: "gpu",
    prefillPerSecond: 20_000,
    decodePerSecond: 200,
  },
];

export interface BudgetRun {
  rates: Rates;
  calls: number;
  promptTokens: number;
  modelledMinutes: number;
  largestCallSeconds: number;
  largestCallTokens: number;
  callsOver300s: number;
}

export function llama3Tokens(text: string): number {
  return llama3Tokenizer.encode(text, { bos: false, eos: false }).length;
}

/** One default digest (10 stories, no cache) of today's front page at `rates`. */
export async function measureBudget(
  rates: Rates,
  flags: Record<string, string> = {},
): Promise<BudgetRun> {
  using world = startDigestWorld({
    ...frontPageToday(),
    ollama: {
      placement: rates.placement,
      machine: { ...rates, answerTokens: 150, countTokens: llama3Tokens },
    },
  });
  const config = loadDigestConfig(world.env, { ...flags, cache: false });
  await runDigest(config, { ...quietOutput(), now: world.ollama.now });
  return budgetRunOf(rates, world.ollama);
}

/** A digest's output and log, thrown away: a bench reads the fake servers' records instead. */
export function quietOutput() {
  return { stdout: { write() {} }, stderr: { write() {} }, logger: createMemoryLogger() };
}

/** What a fake model server modelled for one digest at `rates`, as a BudgetRun. */
export function budgetRunOf(
  rates: Rates,
  server: { modelled: ReadonlyArray<{ promptTokens: number; ms: number }>; modelledMs: number },
): BudgetRun {
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

export function budgetLine(run: BudgetRun, variant = "default"): string {
  return (
    `${`${run.rates.label}, ${variant}`.padEnd(30)} ${run.calls} calls · ${run.promptTokens.toLocaleString("en-US")} prompt tokens · ` +
    `${run.modelledMinutes.toFixed(1)} modelled min · largest call ${run.largestCallSeconds.toFixed(0)} s ` +
    `(${run.largestCallTokens.toLocaleString("en-US")} tokens) · ${run.callsOver300s} calls over 300 s`
  );
}
