import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { loadDigestConfig } from "../../lib/digest/config.ts";
import { runDigest } from "../../lib/digest/digest.ts";
import type { ModelClient } from "../../lib/digest/summarise/models/model-client.ts";
import { openModelClient } from "../../lib/digest/summarise/models/open-model.ts";
import { createMemoryLogger } from "../../lib/log.ts";
import { startDigestWorld } from "../fakes/digest-world.ts";
import { frontPageToday } from "../fakes/front-page-today.ts";
import { DEFAULT_OPENAI_MODEL } from "../fakes/openai-server.ts";

// Ten stories with hundreds of comments each, over real sockets, on a busy machine.
setDefaultTimeout(60_000);

const CPU = { prefillPerSecond: 24, decodePerSecond: 11, answerTokens: 150 };
const GPU = { prefillPerSecond: 20_000, decodePerSecond: 200, answerTokens: 150 };

/**
 * A default digest of today's front page against a fake OpenAI-compatible server modelling
 * `machine`: llama-server's `timings` in each answer, or (timings: false, as LM Studio and vLLM)
 * only the call's duration, measured on the fake's clock.
 */
async function digestToday(
  machine: typeof CPU,
  options: { timings?: boolean; flags?: Record<string, string> } = {},
) {
  using world = startDigestWorld({
    ...frontPageToday(),
    // A big context, so only the budget limits the prompts, as with Ollama's 8192 window.
    openai: { machine, timings: options.timings, contextTokens: 131_072 },
  });
  const server = world.openai;
  if (!server) throw new Error("no OpenAI-compatible server");
  const config = loadDigestConfig(world.env, { ...options.flags, cache: false });
  const timeouts: number[] = [];
  const client = openModelClient(config, { now: server.now });
  const model: ModelClient = {
    ...client,
    generate: (request, call) => {
      timeouts.push(call.timeoutMs);
      return client.generate(request, call);
    },
  };
  const logger = createMemoryLogger();
  const result = await runDigest(config, {
    stdout: { write() {} },
    stderr: { write() {} },
    logger,
    model,
    now: server.now,
  });
  return {
    result,
    logger,
    timeouts,
    // The summaries; the one-token answer before them is the probe of where the model runs.
    calls: server.modelled.filter((call) => call.answerTokens > 1),
    probes: server.modelled.filter((call) => call.answerTokens === 1),
    promptTokens: server.modelled.reduce((sum, call) => sum + call.promptTokens, 0),
    modelledMinutes: server.modelledMs / 60_000,
  };
}

describe("the time budget, with an OpenAI-compatible server", () => {
  test("keeps a CPU's 20 minutes from llama-server's timings, no call over 300 s", async () => {
    const unbudgeted = await digestToday(CPU, { flags: { "time-budget": "0" } });
    const run = await digestToday(CPU);
    expect(unbudgeted.modelledMinutes).toBeGreaterThan(40);
    expect(run.modelledMinutes).toBeLessThanOrEqual(20);
    expect(run.modelledMinutes).toBeGreaterThan(15);
    expect(Math.max(...run.calls.map((call) => call.ms))).toBeLessThanOrEqual(300_000);
    expect(run.result.stats).toEqual({ generated: 20, cached: 0, failed: 0 });
  });

  test("keeps it from each call's duration when the server reports no timings", async () => {
    const run = await digestToday(CPU, { timings: false });
    expect(run.modelledMinutes).toBeLessThanOrEqual(20);
    expect(run.modelledMinutes).toBeGreaterThan(15);
    expect(Math.max(...run.calls.map((call) => call.ms))).toBeLessThanOrEqual(300_000);
    expect(run.result.stats).toEqual({ generated: 20, cached: 0, failed: 0 });
  });

  test("at a GPU's rates finds the GPU with its probe: no budget, every prompt whole", async () => {
    const gpu = await digestToday(GPU);
    const unbudgeted = await digestToday(CPU, { flags: { "time-budget": "0" } });
    expect(gpu.probes).toHaveLength(1);
    expect(gpu.logger.lines.join("\n")).not.toContain("prompts are sized");
    // The prompts of a run without a budget: the same number, as large (they differ by a few
    // tokens as the token estimate is calibrated from answers arriving in another order).
    const total = (run: typeof gpu) => run.calls.reduce((sum, call) => sum + call.promptTokens, 0);
    expect(gpu.calls).toHaveLength(unbudgeted.calls.length);
    expect(total(gpu)).toBeGreaterThan(0.99 * total(unbudgeted));
    const cpu = await digestToday(CPU);
    expect(cpu.logger.lines).toContain(
      `info ${DEFAULT_OPENAI_MODEL} runs on the CPU: prompts are sized to finish within 20 min (--time-budget / DIGEST_TIME_BUDGET; 0 for none)`,
    );
  });

  test("times each call out from its expected duration, whichever way the rates were measured", async () => {
    for (const timings of [true, false]) {
      const run = await digestToday(CPU, { timings, flags: { "time-budget": "0" } });
      // After the first answer has measured the machine, no call is cut off...
      expect(run.timeouts).toHaveLength(run.calls.length);
      run.calls.slice(1).forEach((call, i) => {
        expect(run.timeouts[i + 1]).toBeGreaterThan(1.5 * call.ms);
      });
      expect(Math.max(...run.timeouts)).toBeGreaterThan(300_000);
    }
    // ...and on a fast machine a hung server is given up on within a minute.
    const gpu = await digestToday(GPU);
    expect(Math.max(...gpu.timeouts.slice(1))).toBeLessThan(60_000);
  });
});
