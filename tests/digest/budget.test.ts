import { describe, expect, setDefaultTimeout, test } from "bun:test";
import llama3Tokenizer from "llama3-tokenizer-js";
import { UsageError } from "../../lib/config/errors.ts";
import { loadDigestConfig } from "../../lib/digest/config.ts";
import { runDigest } from "../../lib/digest/digest.ts";
import { openSummaryCache } from "../../lib/digest/summarise/cache.ts";
import type { ModelClient } from "../../lib/digest/summarise/models/model-client.ts";
import { openModelClient } from "../../lib/digest/summarise/models/open-model.ts";
import { createMemoryLogger } from "../../lib/log.ts";
import { startDigestWorld } from "../fakes/digest-world.ts";
import { type FrontPage, frontPageHourLater, frontPageToday } from "../fakes/front-page-today.ts";
import { type ModelledMachine, promptKind } from "../fakes/ollama.ts";
import { tempDirs } from "../fakes/temp-dirs.ts";

// Ten stories with hundreds of comments each, over real sockets, on a busy machine.
setDefaultTimeout(60_000);

const CPU = { prefillPerSecond: 24, decodePerSecond: 11, answerTokens: 150 };
/** The same machine counting with the default model's own tokenizer, as Ollama would. */
const CPU_LLAMA3 = {
  ...CPU,
  countTokens: (text: string) => llama3Tokenizer.encode(text, { bos: false, eos: false }).length,
};
const GPU = { prefillPerSecond: 20_000, decodePerSecond: 200, answerTokens: 150 };

/** A default digest of today's front page against a fake Ollama modelling `machine`. */
async function digestToday(
  machine: ModelledMachine,
  placement: "cpu" | "gpu",
  options: { flags?: Record<string, string>; env?: Record<string, string> } = {},
) {
  using world = startDigestWorld({ ...frontPageToday(), ollama: { placement, machine } });
  const config = loadDigestConfig(
    { ...world.env, ...options.env },
    { ...options.flags, cache: false },
  );
  const logger = createMemoryLogger();
  const timeouts: number[] = [];
  const client = openModelClient(config);
  // The real client, recording the timeout each call was given.
  const model: ModelClient = {
    ...client,
    generate: (request, call) => {
      timeouts.push(call.timeoutMs);
      return client.generate(request, call);
    },
  };
  const result = await runDigest(config, {
    stdout: { write() {} },
    stderr: { write() {} },
    logger,
    model,
    now: world.ollama.now,
  });
  return {
    result,
    logger,
    timeouts,
    calls: world.ollama.modelled,
    prompts: world.ollama.generateCalls.map((call) => call.prompt),
    modelledMinutes: world.ollama.modelledMs / 60_000,
  };
}

describe("the time budget, on today's front page", () => {
  test("keeps a CPU's default 20 minutes with no call over 300 s, every summary written", async () => {
    const run = await digestToday(CPU, "cpu");
    const unbudgeted = await digestToday(CPU, "cpu", { flags: { "time-budget": "0" } });
    expect(unbudgeted.modelledMinutes).toBeGreaterThan(40);
    expect(run.modelledMinutes).toBeLessThanOrEqual(20);
    expect(run.modelledMinutes).toBeGreaterThan(15);
    expect(Math.max(...run.calls.map((call) => call.ms))).toBeLessThanOrEqual(300_000);
    expect(run.result.stats).toEqual({ generated: 20, cached: 0, failed: 0 });
    expect(run.logger.lines).toContain(
      "info llama3.2 runs on the CPU: prompts are sized to finish within 20 min (--time-budget / DIGEST_TIME_BUDGET; 0 for none)",
    );
  });

  test("a first-ever run gives the top story's discussion, planned before any answer, about its fair share", async () => {
    const run = await digestToday(CPU_LLAMA3, "cpu");
    // Every discussion on this front page wants more than the budget gives it.
    const discussions = run.calls.filter(
      (_, i) => promptKind(run.prompts[i] ?? "") === "discussion",
    );
    const top = run.calls.find((_, i) => /^Story: Front-page story 1$/m.test(run.prompts[i] ?? ""));
    const sizes = discussions.map((call) => call.promptTokens).sort((a, b) => a - b);
    const median = sizes[Math.floor(sizes.length / 2)] ?? 0;
    expect(top?.promptTokens ?? 0).toBeGreaterThan(0.75 * median);
  });

  test("keeps a budget given with --time-budget, with more text the more time it has", async () => {
    const short = await digestToday(CPU, "cpu", { flags: { "time-budget": "15m" } });
    const long = await digestToday(CPU, "cpu", { env: { DIGEST_TIME_BUDGET: "40m" } });
    expect(short.modelledMinutes).toBeLessThanOrEqual(15);
    expect(long.modelledMinutes).toBeLessThanOrEqual(40);
    const tokens = (run: typeof short) => run.calls.reduce((sum, c) => sum + c.promptTokens, 0);
    expect(tokens(long)).toBeGreaterThan(1.5 * tokens(short));
  });

  test("at a GPU's rates needs no budget: every prompt is what it was without one", async () => {
    const gpu = await digestToday(GPU, "gpu");
    const unbudgeted = await digestToday(CPU, "cpu", { flags: { "time-budget": "0" } });
    // The calls may come in another order as fetches finish, and the token calibration learns
    // in that order: the prompts are the same to within a few tokens, not byte for byte.
    const tokens = (run: typeof gpu) => run.calls.reduce((sum, c) => sum + c.promptTokens, 0);
    expect(gpu.calls).toHaveLength(unbudgeted.calls.length);
    expect(tokens(gpu)).toBeGreaterThan(0.98 * tokens(unbudgeted));
    expect(tokens(gpu)).toBeLessThan(1.02 * tokens(unbudgeted));
    expect(gpu.logger.lines.join("\n")).not.toContain("prompts are sized");
  });

  test("times each call out from its expected duration at the measured rates", async () => {
    const cpu = await digestToday(CPU, "cpu", { flags: { "time-budget": "0" } });
    // Even the largest prompts on the slow machine are never cut off...
    cpu.calls.forEach((call, i) => {
      expect(cpu.timeouts[i]).toBeGreaterThan(1.5 * call.ms);
    });
    expect(Math.max(...cpu.timeouts)).toBeGreaterThan(300_000);
    // ...while on a fast one a hung server would be given up on within a minute.
    const gpu = await digestToday(GPU, "gpu");
    expect(Math.max(...gpu.timeouts.slice(1))).toBeLessThan(60_000);
    // Even the first, before any answer: /api/ps said GPU, so not the CPU's quarter of an hour.
    expect(gpu.timeouts[0]).toBeLessThan(180_000);
    // OLLAMA_TIMEOUT_MS stays the ceiling when set.
    const capped = await digestToday(CPU, "cpu", {
      flags: { "time-budget": "0" },
      env: { OLLAMA_TIMEOUT_MS: "120000" },
    });
    expect(Math.max(...capped.timeouts)).toBe(120_000);
  });
});

const tempDir = tempDirs("digest-budget-");

/**
 * One default digest at CPU rates with the cache and the archive in `home`, on a clock that
 * starts at `startAt`: its modelled minutes, its prompts, when it ended.
 */
async function digestDay(home: string, page: FrontPage, startAt: number) {
  using world = startDigestWorld({ ...page, ollama: { placement: "cpu", machine: CPU } });
  const start = world.ollama.now();
  const now = () => startAt + (world.ollama.now() - start);
  const config = loadDigestConfig(
    { ...world.env, XDG_CACHE_HOME: home },
    { limit: String(page.stories.length), archive: `${home}/archive` },
  );
  await runDigest(config, {
    stdout: { write() {} },
    stderr: { write() {} },
    logger: createMemoryLogger(),
    now,
    openCache: (path) => openSummaryCache(path, { now }),
    timeZone: "UTC",
  });
  const prompts = world.ollama.generateCalls.map((call) => call.prompt);
  const topDiscussion = world.ollama.modelled.find((_, i) => {
    const prompt = prompts[i] ?? "";
    return promptKind(prompt) === "discussion" && /^Story: Front-page story 1$/m.test(prompt);
  });
  return {
    minutes: world.ollama.modelledMs / 60_000,
    topDiscussionTokens: topDiscussion?.promptTokens ?? 0,
    endedAt: now(),
  };
}

describe("the whole budget, used well", () => {
  const MORNING = Date.parse("2025-08-03T07:00:00Z");
  const HOUR = 3_600_000;

  test("the next day (--archive, the threads grown, yesterday's articles cached): at least 85 % of 20 minutes, the top story not starved", async () => {
    const home = tempDir();
    const today = frontPageToday();
    const first = await digestDay(home, today, MORNING);
    const next = await digestDay(home, frontPageHourLater(today), first.endedAt + 24 * HOUR);
    expect(next.minutes).toBeGreaterThanOrEqual(17);
    expect(next.minutes).toBeLessThanOrEqual(20);
    // Planned before yesterday's articles are found in the cache: about its share of a full run.
    expect(next.topDiscussionTokens).toBeGreaterThanOrEqual(0.75 * first.topDiscussionTokens);
  });

  test("an hour later, with the same cache, still redoes at most 30 % of the first run", async () => {
    const home = tempDir();
    const today = frontPageToday();
    const first = await digestDay(home, today, MORNING);
    const later = await digestDay(home, frontPageHourLater(today), first.endedAt + HOUR);
    expect(later.minutes).toBeLessThanOrEqual(0.3 * first.minutes);
  });

  test("a --time-budget a GPU run never approaches changes nothing in what is sent", async () => {
    const budgeted = await digestToday(GPU, "gpu", { flags: { "time-budget": "5m" } });
    const free = await digestToday(GPU, "gpu");
    const tokens = (run: typeof free) => run.calls.reduce((sum, c) => sum + c.promptTokens, 0);
    expect(budgeted.calls).toHaveLength(free.calls.length);
    expect(tokens(budgeted)).toBeGreaterThan(0.99 * tokens(free));
    // Whole answers, asked for in sentences, as without a budget.
    expect(budgeted.calls.every((call) => call.answerTokens === GPU.answerTokens)).toBe(true);
    expect(budgeted.prompts.every((prompt) => prompt.includes("in 3 to 6 sentences"))).toBe(true);
  });
});

describe("a budget is a promise, at a CPU's rates (modelled time from the fake's durations)", () => {
  test("5, 10 and 20 minutes are each kept within 10 %", async () => {
    for (const minutes of [5, 10, 20]) {
      const run = await digestToday(CPU_LLAMA3, "cpu", { flags: { "time-budget": `${minutes}m` } });
      expect(run.modelledMinutes).toBeLessThanOrEqual(minutes * 1.1);
      expect(run.modelledMinutes).toBeGreaterThanOrEqual(minutes * 0.9);
    }
  });

  test("a small budget cuts answers, then the last stories, and says so in one line", async () => {
    const run = await digestToday(CPU_LLAMA3, "cpu", { flags: { "time-budget": "5m" } });
    const cut = run.logger.lines.filter((line) => line.includes("budget"));
    expect(cut).toEqual([
      expect.stringMatching(
        /^info The 5 min budget at 24\/11 tokens\/s \(assumed until the first answer\) keeps (\d) of 10 stories with prompts at their smallest and answers of 60 tokens; the last \d are left out unless answers show a faster machine$/,
      ),
      expect.stringMatching(
        /^info The time budget left out the last \d stories at the measured rates \(listed unsummarised\)$/,
      ),
    ]);
    // The machine is as assumed: the plan holds, give or take the story the measures move.
    const planned = Number(/keeps (\d) of/.exec(cut[0] ?? "")?.[1]);
    const summarised = run.result.stories.filter((digest) => digest.articleSummary !== null);
    expect(Math.abs(summarised.length - planned)).toBeLessThanOrEqual(1);
    // The first stories are summarised, the rest listed with one note each.
    expect(run.result.stories).toHaveLength(10);
    expect(run.result.stories.slice(0, summarised.length)).toEqual(summarised);
    for (const digest of run.result.stories.slice(summarised.length)) {
      expect(digest.discussionSummary).toBeNull();
      expect(digest.notes).toEqual([
        "Not summarised: the time budget ran out before this story's turn.",
      ]);
    }
    expect(run.result.stats).toEqual({
      generated: 2 * summarised.length,
      cached: 0,
      failed: 0,
      leftOut: 10 - summarised.length,
    });
    // Each answer limited to 60 tokens, and the instruction asks for fewer words than that.
    expect(run.calls.every((call) => call.answerTokens <= 60)).toBe(true);
    expect(run.prompts[0]).toContain("in at most 36 words");
  });

  test("a machine faster than assumed keeps the stories the plan first cut, a slower one cuts late ones; the budget used, not exceeded", async () => {
    // The plan is made at the prior's 24/11 tokens/s; the fake machine answers at other rates.
    const cases = [
      { machine: { ...CPU_LLAMA3, prefillPerSecond: 60, decodePerSecond: 25 }, budget: 5 },
      { machine: { ...CPU_LLAMA3, prefillPerSecond: 12, decodePerSecond: 6 }, budget: 12 },
    ];
    const [faster, slower] = await Promise.all(
      cases.map(async ({ machine, budget }) => {
        const run = await digestToday(machine, "cpu", { flags: { "time-budget": `${budget}m` } });
        const planned = Number(/keeps (\d+) of 10/.exec(run.logger.lines.join("\n"))?.[1] ?? 10);
        const summarised = run.result.stories.filter((d) => d.articleSummary !== null).length;
        return { run, budget, planned, summarised };
      }),
    );
    if (!faster || !slower) throw new Error("two runs expected");
    expect(faster.planned).toBeLessThan(10);
    expect(faster.summarised).toBeGreaterThan(faster.planned);
    expect(slower.planned).toBe(10);
    expect(slower.summarised).toBeLessThan(10);
    expect(slower.run.result.stats.leftOut).toBe(10 - slower.summarised);
    for (const { run, budget } of [faster, slower]) {
      expect(run.modelledMinutes).toBeGreaterThanOrEqual(budget * 0.85);
      expect(run.modelledMinutes).toBeLessThanOrEqual(budget);
    }
  });

  test("a budget that holds every story keeps them all, answers of 100 tokens, no cut line", async () => {
    const run = await digestToday(CPU_LLAMA3, "cpu", { flags: { "time-budget": "12m" } });
    expect(run.result.stories).toHaveLength(10);
    expect(run.calls.every((call) => call.answerTokens === 100)).toBe(true);
    expect(run.logger.lines.filter((line) => line.includes("left out"))).toEqual([]);
  });

  test("a budget too short for one story says so before any model call", async () => {
    using world = startDigestWorld({
      ...frontPageToday(),
      ollama: { placement: "cpu", machine: CPU },
    });
    const config = loadDigestConfig(world.env, { "time-budget": "30s", cache: false });
    const run = runDigest(config, {
      stdout: { write() {} },
      stderr: { write() {} },
      logger: createMemoryLogger(),
      now: world.ollama.now,
    });
    expect(run).rejects.toThrow(UsageError);
    expect(run).rejects.toThrow(
      /^Time budget too short for even one story: 30 s at 24\/11 tokens\/s .*; give --time-budget 1m or more \(0 for none\)$/,
    );
    await run.catch(() => {});
    expect(world.ollama.generateCalls).toHaveLength(0);
  });
});

describe("the time left on the progress line", () => {
  /** Each ETA the progress line showed, with the modelled time still to come when it did. */
  async function etas(budget: string) {
    using world = startDigestWorld({
      ...frontPageToday(),
      ollama: { placement: "cpu", machine: CPU_LLAMA3 },
    });
    const config = loadDigestConfig(world.env, { "time-budget": budget, cache: false });
    const shown: { text: string; at: number }[] = [];
    const stderr = {
      isTTY: true,
      columns: 200,
      write(text: string) {
        const left = / · (under 10 s left|about \d+ (?:s|min) left) · /.exec(text)?.[1];
        if (left) shown.push({ text: left, at: world.ollama.modelledMs });
      },
    };
    await runDigest(config, {
      stdout: { write() {} },
      stderr,
      logger: createMemoryLogger(),
      now: world.ollama.now,
    });
    return shown.map(({ text, at }) => ({ text, actualMs: world.ollama.modelledMs - at }));
  }

  const parse = (text: string) => {
    if (text === "under 10 s left") return 5_000;
    const [, n, unit] = /about (\d+) (s|min) left/.exec(text) ?? [];
    return Number(n) * (unit === "min" ? 60_000 : 1000);
  };

  test("is honest from the first answer, and never 'under 10 s' with minutes to go", async () => {
    for (const budget of ["5m", "20m"]) {
      const shown = await etas(budget);
      expect(shown.length).toBeGreaterThan(10);
      for (const { text, actualMs } of shown) {
        if (actualMs > 60_000) expect(text).not.toBe("under 10 s left");
        // Within a third of the modelled time still to come, or a minute when little is left.
        expect(Math.abs(parse(text) - actualMs)).toBeLessThanOrEqual(
          Math.max(actualMs / 3, 60_000),
        );
      }
    }
  });
});
