import type { Resolver } from "../http/ssrf.ts";
import { createLogger, type Logger } from "../log.ts";
import { errorMessage } from "../text/error-message.ts";
import { editionMeta, planCatchUp } from "./catch-up.ts";
import type { DigestConfig } from "./config.ts";
import type { RetryPolicy } from "./fetch/search-fetch.ts";
import { openSources } from "./fetch/sources.ts";
import { compareWithLastRun, type Freshness } from "./freshness.ts";
import { rememberModel, startModel } from "./model-start.ts";
import { digestStories, type PipelineStats, readCalibration } from "./pipeline.ts";
import { createProgress, loggerAround, type Progress, type ProgressStream } from "./progress.ts";
import { openArchive } from "./render/archive.ts";
import {
  DigestFailedError,
  interrupted,
  ModelGoneError,
  publish,
  stoppedShort,
} from "./run-end.ts";

export { DigestFailedError, DigestInterruptedError, ModelGoneError } from "./run-end.ts";

import { type Output, openOutput, refuseNonRegularTarget, type TextSink } from "./render/output.ts";
import { createRenderer } from "./render/renderer.ts";
import type { Renderer } from "./render/types.ts";
import { frontPageAndMachine, startBudget } from "./run-start.ts";
import { openSummaryCache, type RunRecord, type SummaryCache } from "./summarise/cache.ts";
import { createModelHealth, goneMessage } from "./summarise/model-health.ts";
import type { ModelClient } from "./summarise/models/model-client.ts";
import { cachedModelName, openModelClient } from "./summarise/models/open-model.ts";
import { planDiscussion } from "./summarise/reuse.ts";
import type { DigestMeta, Story, StoryDigest } from "./types.ts";

export interface DigestDeps {
  /** Where the digest goes when there is no --out. */
  stdout: TextSink;
  /** Progress goes here, only when it is a terminal. */
  stderr: ProgressStream;
  fetch?: typeof fetch;
  logger?: Logger;
  now?: () => number;
  /** Waits between search API retries; tests pass one that returns at once. */
  sleep?: (ms: number) => Promise<void>;
  retryPolicy?: RetryPolicy;
  openCache?: (path: string) => SummaryCache;
  /** DNS for the SSRF check of story links; tests pass one. */
  resolve?: Resolver;
  /** Aborted by Ctrl-C: downloads and model calls stop, a --out temp file is removed. */
  signal?: AbortSignal;
  /** The model server; default the one the config names (openModelClient). */
  model?: ModelClient;
  /** Dates on the page and the archive's day; the process's own zone when unset (tests set it). */
  timeZone?: string;
  /** A CA for the SMTP server's certificate (tests); the system's when unset. */
  smtpTls?: { ca: string; servername?: string };
}

export interface DigestResult {
  stories: StoryDigest[];
  stats: PipelineStats;
}

/**
 * The whole digest: check the model server, read the front page, then stream each story's
 * summaries to the output in front-page order. Throws PreflightError (the server unusable),
 * SearchApiError (front page unreadable), UsageError (bad --out or --archive), EmailError,
 * DigestInterruptedError (Ctrl-C), ModelGoneError, DigestFailedError.
 */
export async function runDigest(config: DigestConfig, deps: DigestDeps): Promise<DigestResult> {
  const now = deps.now ?? Date.now;
  const fetch = deps.fetch ?? globalThis.fetch;
  const baseLogger = deps.logger ?? createLogger();
  const started = now();
  // --out at a device, FIFO or folder is refused before the archive folder is made.
  if (config.out !== undefined) await refuseNonRegularTarget(config.out);
  // The archive first: it leaves nothing behind when it cannot be opened, --out's file would.
  const archive = config.archive === undefined ? undefined : await openArchive(config.archive);
  const output = await openOutput(config.out, deps.stdout, { stderr: deps.stderr });
  // The file --out names, left as it was by a run that stops short (none for /dev/stdout).
  const outFile = output.stream === undefined ? config.out : undefined;
  let cache: SummaryCache | undefined;
  let progress: Progress | undefined;
  // Set once the digest's opening is written: a run stopped after that ends the text it began.
  let begun: Renderer | undefined;
  // Stories written so far, of how many: for the line Ctrl-C ends with.
  const done = { written: 0, total: 0 };
  const health = createModelHealth();
  // Aborted when a story cannot be written (a closed pipe, a full disk): nobody reads the rest.
  const outputFailed = new AbortController();
  try {
    // The clock measures each call too: a server that reports no timings is timed by it.
    const client = deps.model ?? openModelClient(config, { fetch, now });
    cache = openCache(config.cacheFile, deps.openCache, baseLogger);
    // A re-run of a model checked before asks the server nothing until a summary needs it.
    const start = await startModel(config, client, {
      cache,
      signal: deps.signal,
      logger: baseLogger,
    });
    const { model, facts, numCtx } = start;
    const sources = openSources(config.sources, config);
    const catchUp = await planCatchUp(config, { ...deps, now: started, logger: baseLogger });
    const { front, machine } = await frontPageAndMachine(config, model, numCtx, {
      ...deps,
      fetch,
      now,
      logger: baseLogger,
      sources,
      catchUp,
    });
    const { malformed } = front;
    // The pipeline names the model only to the cache: by API and model (see cachedModelName).
    const cacheModel = cachedModelName(config.api, facts.model, config.language);
    if (!start.deferred) {
      const at = { server: config.server.url, model: cachedModelName(config.api, facts.model) };
      rememberModel(cache, at, { facts, machine }, baseLogger);
    }
    const calibration = readCalibration(cache, cacheModel, baseLogger);
    const budget = startBudget(config, {
      model: facts.model,
      machine,
      numCtx,
      stories: front.stories,
      cached: (story) => isCached(cache, cacheModel, story, now()),
      logger: baseLogger,
      calibration,
      loaded: !start.deferred && machine !== null,
    });
    const stories = front.stories;
    done.total = stories.length;
    // A digest written to stderr is not drawn over by the progress lines.
    progress = createProgress(output.stream === "stderr" ? { write: () => {} } : deps.stderr, {
      total: stories.length,
      titles: stories.map((story) => story.title),
      now,
      timeLeft: () => budget.leftMs(),
    });
    const logger = loggerAround(baseLogger, progress);
    const renderer = createRenderer(config.format, {
      timeZone: deps.timeZone,
      locale: config.language,
    });
    const stats: PipelineStats = { generated: 0, cached: 0, failed: 0 };
    const freshness = compareWithLastRun(stories, readLastRun(cache, baseLogger));
    const edition = editionMeta(config.sources, catchUp);
    const meta = digestMeta(started, facts.model, { stories, freshness, malformed, edition });
    // Why the run stops short, if it must: Ctrl-C, the model's first-call check, or the model gone.
    const stopNow = () => {
      if (deps.signal?.aborted) return interrupted(outFile, done);
      if (start.failed.aborted) return asError(start.failed.reason);
      if (health.gone === null) return null;
      return new ModelGoneError(
        goneMessage(health.gone, { describe: model.describe, out: outFile }),
      );
    };
    await output.write(renderer.begin(meta));
    begun = renderer;
    const digests = digestStories(stories, {
      config: { ...config, model: cacheModel, numCtx },
      sources,
      calibration,
      fetch,
      model,
      budget,
      health,
      cache,
      logger,
      progress,
      stats,
      sleep: deps.sleep,
      retryPolicy: deps.retryPolicy,
      resolve: deps.resolve,
      // Ctrl-C, the model taken for gone, or the output failing: every call and download
      // still to come stops.
      signal: AbortSignal.any(
        [deps.signal, health.signal, start.failed, outputFailed.signal].filter(isSignal),
      ),
      now,
    });
    const results = await writeStories(
      digests,
      { output, renderer, freshness, progress, stopNow, outputFailed },
      () => done.written++,
    );
    const stop = stopNow();
    if (stop) throw stop;
    health.flush();
    await output.write(renderer.end());
    progress.stop();
    progress = undefined;
    for (const line of endLines(stories.length, now() - started, stats, facts.model)) {
      baseLogger.info(line);
    }
    // A digest of failure notes only replaces neither --out, nor the archive, nor the last run.
    if (stats.failed > 0 && stats.generated + stats.cached === 0) {
      const left = outFile === undefined ? "" : `; ${outFile} was left as it was`;
      throw new DigestFailedError(
        `Every summary failed (see the notes); check that ${model.describe} still runs and has ${facts.model}${left}`,
      );
    }
    await output.commit();
    if (!catchUp) recordRun(cache, started, stories, baseLogger); // "New" is since the last day
    await publish(
      { meta, stories: results },
      { config, deps, archive, started, logger: baseLogger },
    );
    return { stories: results, stats };
  } catch (error) {
    throw await stoppedShort(error, { begun, done, output, signal: deps.signal, outFile }, () => {
      progress?.stop();
      return baseLogger;
    });
  } finally {
    progress?.stop();
    cache?.close();
  }
}

/** What the digest's opening says: when, by which model, how many stories and how many new. */
function digestMeta(
  started: number,
  model: string,
  run: {
    stories: Story[];
    freshness: Freshness;
    malformed: number;
    edition: Pick<DigestMeta, "sources" | "catchUp">;
  },
): DigestMeta {
  return {
    generatedAt: new Date(started).toISOString(),
    model,
    total: run.stories.length,
    newCount: run.freshness.newCount,
    lastRunAt: run.freshness.lastRunAt,
    malformedHits: run.malformed,
    ...run.edition,
  };
}

/** Both of a story's summaries are in the cache and still good: a re-run needs no model call for it. */
function isCached(
  cache: SummaryCache | undefined,
  model: string,
  story: Story,
  now: number,
): boolean {
  try {
    const discussion = cache?.lookup(model, story.id, "discussion");
    if (cache?.lookup(model, story.id, "article") === undefined || !discussion) return false;
    // A discussion grown or aged past reuse goes to the model (reuse.ts): planned as needing it,
    // so a next day's run is not planned as a re-run. The hash is unknown until the comments are.
    const plan = planDiscussion(discussion, { sourceHash: "", comments: story.numComments }, now);
    return plan.use === "cached" || plan.use === "as-of";
  } catch {
    // A broken cache is a miss (the pipeline says so when it reads it).
    return false;
  }
}

/**
 * Writes each story as it comes, in front-page order, each marked new or not. After Ctrl-C or
 * with the model gone (`stopNow`) the stories still coming hold only failure notes: it writes
 * none, and throws what stopped it.
 */
async function writeStories(
  digests: AsyncIterable<StoryDigest>,
  run: {
    output: Output;
    renderer: Renderer;
    freshness: Freshness;
    progress: Progress;
    stopNow: () => Error | null;
    outputFailed: AbortController;
  },
  onWritten: () => void,
): Promise<StoryDigest[]> {
  const written: StoryDigest[] = [];
  for await (const digest of digests) {
    const stop = run.stopNow();
    if (stop) throw stop;
    const marked = run.freshness.mark(digest);
    // stdout and stderr may be the same terminal: no progress text in front of a story.
    run.progress.clear();
    try {
      await run.output.write(run.renderer.story(marked, written.length));
    } catch (error) {
      // Stopped before the error leaves the loop, which waits for the stories still in work.
      run.outputFailed.abort(error);
      throw error;
    }
    run.progress.redraw();
    written.push(marked);
    onWritten();
  }
  return written;
}

/**
 * The run's last lines: the stories the time budget left out, re-planned as answers measured the
 * machine (listed, with a note, unsummarised), and what was digested in how long, by whom.
 */
function endLines(stories: number, ms: number, stats: PipelineStats, model: string): string[] {
  const left = stats.leftOut ?? 0;
  const leftOut = `The time budget left out the last ${left === 1 ? "story" : `${left} stories`} at the measured rates (listed unsummarised)`;
  const digested = `Digest of ${stories} ${stories === 1 ? "story" : "stories"} in ${(ms / 1000).toFixed(1)}s: ${summaryCounts(stats, model)}`;
  return left > 0 ? [leftOut, digested] : [digested];
}

/**
 * Where the summaries came from: "20 summaries, all from the cache", "20 summaries: 12 by
 * llama3.2, 8 from the cache", "19 summaries by llama3.2, 1 failed".
 */
export function summaryCounts(stats: PipelineStats, model: string): string {
  const made = stats.generated + stats.cached;
  const plural = (n: number) => `${n} ${n === 1 ? "summary" : "summaries"}`;
  const failed = stats.failed > 0 ? `, ${stats.failed} failed` : "";
  if (made === 0) return `no summaries${failed}`;
  if (stats.cached === 0) return `${plural(made)} by ${model}${failed}`;
  if (stats.generated === 0) {
    return `${plural(made)}, ${made === 1 ? "" : "all "}from the cache${failed}`;
  }
  return `${plural(made)}: ${stats.generated} by ${model}, ${stats.cached} from the cache${failed}`;
}

/** The previous run, for the "new" marks; without it they are left out. */
function readLastRun(cache: SummaryCache | undefined, logger: Logger): RunRecord | null {
  try {
    return cache?.lastRun() ?? null;
  } catch (error) {
    logger.warn(`Previous run could not be read: ${errorMessage(error)}`);
    return null;
  }
}

function recordRun(
  cache: SummaryCache | undefined,
  at: number,
  stories: readonly Story[],
  logger: Logger,
): void {
  try {
    cache?.recordRun(at, stories);
  } catch (error) {
    logger.warn(`This run could not be remembered: ${errorMessage(error)}`);
  }
}

/** The cache is an optimisation: if it cannot be opened the digest runs without it. */
function openCache(
  path: string | undefined,
  open: ((path: string) => SummaryCache) | undefined,
  logger: Logger,
): SummaryCache | undefined {
  if (path === undefined) return undefined;
  try {
    return (open ?? openSummaryCache)(path);
  } catch (error) {
    logger.warn(
      `Summary cache ${path} cannot be opened, running without it: ${errorMessage(error)}`,
    );
    return undefined;
  }
}

function asError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(String(reason));
}

function isSignal(signal: AbortSignal | undefined): signal is AbortSignal {
  return signal !== undefined;
}
