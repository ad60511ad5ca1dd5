/**
 * `bun run bench:digest`: how well the digest hides fetching behind generation.
 *
 * A fake Ollama takes a fixed time per call; fake search and article servers add latency;
 * all on 127.0.0.1. Prints wall time ÷ LLM busy time for the real pipeline and for a naive
 * sequential loop, and the wall time of a re-run answered from the cache. Then how much of a
 * busy story (300 comments, a long link-heavy article) reaches the model at num_ctx 4096 and 8192.
 * Then what a default digest of today's front page costs at CPU and GPU rates (digest-budget.ts),
 * the same through an OpenAI-compatible server (digest-openai.ts), how much of its busiest
 * thread's largest subthreads reaches the model (digest-coverage.ts), what a budget of 20, 12, 10
 * and 5 minutes shows per story and the prompts' anatomy (digest-reach.ts), and what the same
 * digest costs an hour later with the cache (digest-rerun.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineCommand } from "citty";
import { z } from "zod";
import { runScript } from "../lib/cli/run.ts";
import { intInRange, parseEnv } from "../lib/config/env.ts";
import { type DigestConfig, loadDigestConfig } from "../lib/digest/config.ts";
import { runDigest } from "../lib/digest/digest.ts";
import { fetchArticle } from "../lib/digest/fetch/article.ts";
import { fetchComments, fetchFrontPage } from "../lib/digest/fetch/hn/client.ts";
import { buildThread } from "../lib/digest/fetch/thread.ts";
import { generate } from "../lib/digest/summarise/models/ollama/generate.ts";
import { answerReserve, articlePrompt, discussionPrompt } from "../lib/digest/summarise/prompt.ts";
import { articleHtml } from "../tests/fakes/article-site.ts";
import { startDigestWorld } from "../tests/fakes/digest-world.ts";
import { commentHit, storyHit } from "../tests/fakes/hn-search.ts";
import { budgetLine, MACHINES, measureBudget, quietOutput } from "./digest-budget.ts";
import {
  coverageLine,
  measureCoverage,
  measureSubthreads,
  subthreadLine,
} from "./digest-coverage.ts";
import { measureOpenAiBudget } from "./digest-openai.ts";
import { measureReach, reachLine } from "./digest-reach.ts";
import {
  fillLine,
  measureNextDay,
  measurePrefixCache,
  measureRerun,
  measureWindowFill,
  nextDayLine,
  rerunLine,
} from "./digest-rerun.ts";

function newsOf(count: number) {
  const paragraphs = Array.from(
    { length: 40 },
    (_, i) => `Paragraph ${i + 1}: an article long enough to be worth extracting and summarising.`,
  );
  const stories = Array.from({ length: count }, (_, i) =>
    storyHit({ title: `Benchmark story ${i + 1}`, url: `/article/${i + 1}`, num_comments: 30 }),
  );
  const pages = Object.fromEntries(
    stories.map((_, i) => [
      `/article/${i + 1}`,
      { body: articleHtml(`Story ${i + 1}`, paragraphs) },
    ]),
  );
  const comments = Object.fromEntries(
    stories.map((hit) => {
      const id = Number(hit.objectID);
      const top = Array.from({ length: 10 }, (_, j) =>
        commentHit(id, { comment_text: `Top-level opinion ${j} on <i>this</i> &amp; that.` }),
      );
      const replies = top.flatMap((parent) =>
        [1, 2].map((k) =>
          commentHit(id, { parent_id: Number(parent.objectID), comment_text: `Reply ${k}.` }),
        ),
      );
      return [id, [...replies, ...top]];
    }),
  );
  return { stories, pages, comments };
}

/** The obvious loop: one story at a time, fetch then summarise, nothing overlapped. */
async function naiveDigest(config: DigestConfig): Promise<void> {
  const { stories } = await fetchFrontPage(config.searchUrl, config.limit);
  const budget = { numCtx: config.numCtx };
  const ask = (prompt: string) =>
    generate(config.server.url, {
      model: config.model,
      prompt,
      numCtx: config.numCtx,
      numPredict: answerReserve(config.numCtx),
    });
  for (const story of stories) {
    if (story.url) {
      const article = await fetchArticle(story.url, {
        timeoutMs: config.articleTimeoutMs,
        maxBytes: config.articleMaxBytes,
        allow: config.allowedHosts,
      });
      if (article.ok) {
        await ask(articlePrompt(story, article.text, budget).prompt);
      }
    }
    const comments = await fetchComments(config.searchUrl, story.id, { max: config.maxComments });
    await ask(discussionPrompt(story, buildThread(comments, story.id), budget).prompt);
  }
}

const settings = z.object({
  BENCH_STORIES: intInRange(1, 100).default(10),
  BENCH_LLM_MS: intInRange(1, 10_000).default(200),
  BENCH_SEARCH_MS: intInRange(0, 10_000).default(40),
  BENCH_ARTICLE_MS: intInRange(0, 10_000).default(80),
});

async function bench(env: Record<string, string | undefined>): Promise<void> {
  const options = parseEnv(settings, env);
  const cacheHome = mkdtempSync(join(tmpdir(), "bench-digest-"));
  using world = startDigestWorld({
    ...newsOf(options.BENCH_STORIES),
    ollama: { delayMs: options.BENCH_LLM_MS },
    searchLatencyMs: options.BENCH_SEARCH_MS,
    articleLatencyMs: options.BENCH_ARTICLE_MS,
  });
  const config = loadDigestConfig(
    { ...world.env, XDG_CACHE_HOME: cacheHome },
    { limit: String(options.BENCH_STORIES) },
  );
  const quiet = quietOutput();
  const print = (line: string) => process.stdout.write(`${line}\n`);

  print(
    `${options.BENCH_STORIES} stories, LLM ${options.BENCH_LLM_MS} ms/call, search +${options.BENCH_SEARCH_MS} ms, articles +${options.BENCH_ARTICLE_MS} ms, --concurrency 1`,
  );
  try {
    const measure = async (label: string, run: () => Promise<unknown>) => {
      const callsBefore = world.ollama.generateCalls.length;
      const busyBefore = world.ollama.busyMs;
      const start = performance.now();
      await run();
      const wall = performance.now() - start;
      const busy = world.ollama.busyMs - busyBefore;
      const calls = world.ollama.generateCalls.length - callsBefore;
      const ratio = busy > 0 ? (wall / busy).toFixed(3) : "n/a (no LLM call)";
      print(
        `${label.padEnd(22)} wall ${(wall / 1000).toFixed(2)} s · LLM busy ${(busy / 1000).toFixed(2)} s · ${calls} LLM calls · wall/busy ${ratio}`,
      );
    };
    await measure("digest (pipeline)", () => runDigest(config, quiet));
    await measure("naive sequential", () => naiveDigest(config));
    await measure("digest, cached re-run", () => runDigest(config, quiet));
  } finally {
    rmSync(cacheHome, { recursive: true, force: true });
  }
  print(
    "share of a 300-comment thread (60 top-level) and a link-heavy article shown to the model:",
  );
  for (const numCtx of [4096, 8192]) print(coverageLine(await measureCoverage(numCtx)));
  print(
    "a default digest of today's front page (10 stories) at a machine's rates, Llama 3 tokens, modelled time:",
  );
  const [cpu] = MACHINES;
  if (cpu) print(budgetLine(await measureBudget(cpu, { "time-budget": "0" }), "no budget"));
  for (const rates of MACHINES) print(budgetLine(await measureBudget(rates)));
  print(
    "the same through an OpenAI-compatible server (--api=openai; the first call is the one-token probe of where the model runs):",
  );
  for (const rates of MACHINES) {
    print(budgetLine(await measureOpenAiBudget(rates, { timings: true }), "llama-server timings"));
    print(budgetLine(await measureOpenAiBudget(rates, { timings: false }), "call durations only"));
  }
  print(
    "the busiest thread's largest subthreads (of 366 comments) in that digest's discussion prompt:",
  );
  for (const rates of MACHINES) print(subthreadLine(await measureSubthreads(rates)));
  if (cpu) {
    print(
      "what a budget shows per story of today's front page at CPU rates (medians of 10 stories), and the prompts' anatomy in Llama 3 tokens:",
    );
    for (const prefixCache of [false, true]) {
      for (const budget of ["20m", "12m", "10m", "5m"]) {
        const label = `prefix cache ${prefixCache ? "on" : "off"}`;
        print(reachLine(label, await measureReach(cpu, budget, { prefixCache })));
      }
    }
  }
  print("the same digest an hour later (two new stories, threads 10 % longer), same cache:");
  for (const rates of MACHINES) {
    for (const prefixCache of [false, true])
      print(rerunLine(await measureRerun(rates, prefixCache)));
  }
  if (cpu) {
    print(
      "the next day with --archive (yesterday's articles cached, every discussion a day old and grown), default budget:",
    );
    print(nextDayLine(await measureNextDay(cpu)));
    const saving = await measurePrefixCache(cpu);
    const percent = (100 * (saving.off - saving.on)) / saving.off;
    print(
      `Ollama's prefix cache, ${cpu.label}, no budget (same prompts): ${saving.off.toFixed(1)} → ${saving.on.toFixed(1)} modelled min (−${percent.toFixed(1)} %)`,
    );
  }
  const gpu = MACHINES.find((rates) => rates.placement === "gpu");
  if (gpu) {
    print("the 8192-token window's room for the prompt, filled (Llama 3 tokens), at GPU rates:");
    const fill = await measureWindowFill(gpu);
    print(fillLine("first run, estimate uncalibrated", fill.before));
    print(fillLine("next run, calibrated from the cache", fill.after));
  }
}

await runScript(
  defineCommand({
    meta: {
      name: "bench:digest",
      description:
        "Benchmark the digest against local fakes. Env: BENCH_STORIES (10), BENCH_LLM_MS (200), BENCH_SEARCH_MS (40), BENCH_ARTICLE_MS (80).",
    },
    run: () => bench(process.env),
  }),
);
