/**
 * What a digest an hour after the last one costs: today's front page, then the same cache an
 * hour later with two new stories and threads 10 % longer, both against a fake Ollama modelling
 * a machine's rates (Llama 3 token counts, Ollama's prefix cache on or off). The share is the
 * re-run's modelled time over the first run's.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadDigestConfig } from "../lib/digest/config.ts";
import { runDigest } from "../lib/digest/digest.ts";
import type { JsonStory } from "../lib/digest/render/json.ts";
import { openSummaryCache } from "../lib/digest/summarise/cache.ts";
import { answerReserve } from "../lib/digest/summarise/prompt.ts";
import { createMemoryLogger } from "../lib/log.ts";
import { startDigestWorld } from "../tests/fakes/digest-world.ts";
import {
  type FrontPage,
  frontPageHourLater,
  frontPageToday,
} from "../tests/fakes/front-page-today.ts";
import { llama3Tokens, type Rates } from "./digest-budget.ts";

const HOUR = 3_600_000;
const MORNING = Date.parse("2025-08-03T07:00:00Z");

export interface RerunCost {
  rates: Rates;
  prefixCache: boolean;
  firstMinutes: number;
  firstCalls: number;
  laterMinutes: number;
  laterCalls: number;
  /** The same share without loading the model, which every run cold after an hour pays once. */
  callsShare: number;
  /** Both summaries of both new stories were written. */
  newStoriesWhole: boolean;
}

export async function measureRerun(rates: Rates, prefixCache: boolean): Promise<RerunCost> {
  const home = mkdtempSync(join(tmpdir(), "bench-digest-rerun-"));
  try {
    const today = frontPageToday();
    const first = await digestOnce(home, today, rates, { prefixCache, startAt: MORNING });
    const later = await digestOnce(home, frontPageHourLater(today), rates, {
      prefixCache,
      startAt: first.endedAt + HOUR,
    });
    const fresh = later.stories.filter((story) => /story 1[12]$/.test(story.title));
    return {
      rates,
      prefixCache,
      firstMinutes: first.modelledMs / 60_000,
      firstCalls: first.calls,
      laterMinutes: later.modelledMs / 60_000,
      laterCalls: later.calls,
      callsShare: later.callsMs / first.callsMs,
      newStoriesWhole:
        fresh.length === 2 &&
        fresh.every((story) => story.articleSummary !== null && story.discussionSummary !== null),
    };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/** The same front page a day later, with the cache and an archive: how much of 20 minutes it uses. */
export interface NextDayCost {
  rates: Rates;
  firstMinutes: number;
  nextMinutes: number;
  calls: number;
}

/**
 * Today's front page, then a day later the same stories with threads 10 % longer and two new
 * ones, with the cache and `--archive`: yesterday's articles are reused, every discussion is a
 * day old and made again, so the run should use its whole default budget.
 */
export async function measureNextDay(rates: Rates): Promise<NextDayCost> {
  const home = mkdtempSync(join(tmpdir(), "bench-digest-nextday-"));
  try {
    const today = frontPageToday();
    const flags = { archive: join(home, "archive") };
    const first = await digestOnce(home, today, rates, {
      prefixCache: true,
      startAt: MORNING,
      flags,
    });
    const next = await digestOnce(home, frontPageHourLater(today), rates, {
      prefixCache: true,
      startAt: first.endedAt + 24 * HOUR,
      flags,
    });
    return {
      rates,
      firstMinutes: first.modelledMs / 60_000,
      nextMinutes: next.modelledMs / 60_000,
      calls: next.calls,
    };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

export function nextDayLine(cost: NextDayCost): string {
  return `${cost.rates.label.padEnd(20)} first day ${cost.firstMinutes.toFixed(2)} min · the next day ${cost.nextMinutes.toFixed(2)} min (${cost.calls} calls) = ${((100 * cost.nextMinutes) / 20).toFixed(1)} % of the default 20 min`;
}

/**
 * What Ollama's prefix cache saves on a first run with no time budget (every prompt its whole
 * window, so the prompts are the same with the cache on and off): modelled minutes off and on.
 */
export async function measurePrefixCache(rates: Rates): Promise<{ off: number; on: number }> {
  const minutes = async (prefixCache: boolean) => {
    const home = mkdtempSync(join(tmpdir(), "bench-digest-prefix-"));
    try {
      const run = await digestOnce(home, frontPageToday(), rates, {
        prefixCache,
        startAt: MORNING,
        flags: { "time-budget": "0" },
      });
      return run.modelledMs / 60_000;
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  };
  return { off: await minutes(false), on: await minutes(true) };
}

/** One default digest (JSON, the cache in `home`) on a clock that starts at `startAt`. */
async function digestOnce(
  home: string,
  page: FrontPage,
  rates: Rates,
  options: { prefixCache: boolean; startAt: number; flags?: Record<string, string> },
) {
  using world = startDigestWorld({
    ...page,
    ollama: {
      placement: rates.placement,
      machine: {
        ...rates,
        answerTokens: 150,
        countTokens: llama3Tokens,
        prefixCache: options.prefixCache,
      },
    },
  });
  // The run's clock: its start, moved on by the model time the fake reports.
  const start = world.ollama.now();
  const now = () => options.startAt + (world.ollama.now() - start);
  const config = loadDigestConfig(
    { ...world.env, XDG_CACHE_HOME: home },
    { ...options.flags, format: "json", limit: String(page.stories.length) },
  );
  const chunks: string[] = [];
  await runDigest(config, {
    stdout: { write: (text: string) => void chunks.push(text) },
    stderr: { write() {} },
    logger: createMemoryLogger(),
    now,
    openCache: (path) => openSummaryCache(path, { now }),
  });
  return {
    stories: (JSON.parse(chunks.join("")) as { stories: JsonStory[] }).stories,
    modelledMs: world.ollama.modelledMs,
    callsMs: world.ollama.modelled.reduce((sum, call) => sum + call.ms, 0),
    calls: world.ollama.generateCalls.length,
    prompts: world.ollama.generateCalls.map((call) => call.prompt),
    endedAt: now(),
  };
}

export function rerunLine(cost: RerunCost): string {
  const share = (100 * cost.laterMinutes) / cost.firstMinutes;
  return (
    `${cost.rates.label.padEnd(20)} prefix cache ${cost.prefixCache ? "on " : "off"} · first run ` +
    `${cost.firstMinutes.toFixed(2)} min (${cost.firstCalls} calls) · an hour later ${cost.laterMinutes.toFixed(2)} min ` +
    `(${cost.laterCalls} calls) = ${share.toFixed(1)} % (calls alone, without loading the model: ${(100 * cost.callsShare).toFixed(1)} %) · new stories ${cost.newStoriesWhole ? "both summaries" : "INCOMPLETE"}`
  );
}

/**
 * How full the context window is for the prompts that had to be cut to fit (Llama 3 tokens over
 * the room the window leaves after the answer), at a GPU's rates with no budget: a first run with
 * an empty cache (the estimate uncalibrated), then another front page once the cache holds the
 * counts the model reported.
 */
export async function measureWindowFill(rates: Rates): Promise<{ before: Fill; after: Fill }> {
  const home = mkdtempSync(join(tmpdir(), "bench-digest-fill-"));
  try {
    const fill = async (startAt: number) => {
      const run = await digestOnce(home, frontPageToday(), rates, { prefixCache: false, startAt });
      const room = 8192 - answerReserve(8192);
      const cut = run.prompts.filter(
        (prompt) => prompt.includes("[… cut here to fit") || / comments are shown: /.test(prompt),
      );
      const shares = cut.map((prompt) => llama3Tokens(prompt) / room).sort((a, b) => a - b);
      return {
        prompts: shares.length,
        median: shares[Math.floor(shares.length / 2)] ?? 0,
        max: shares.at(-1) ?? 0,
      };
    };
    const before = await fill(MORNING);
    const after = await fill(MORNING + HOUR);
    return { before, after };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

export interface Fill {
  prompts: number;
  median: number;
  max: number;
}

export function fillLine(label: string, fill: Fill): string {
  const percent = (share: number) => `${(100 * share).toFixed(1)} %`;
  return `${label.padEnd(34)} ${fill.prompts} prompts cut to fit · window filled: median ${percent(fill.median)}, most ${percent(fill.max)}`;
}
