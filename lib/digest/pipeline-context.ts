import type { Resolver } from "../http/ssrf.ts";
import type { Logger } from "../log.ts";
import type { DigestConfig } from "./config.ts";
import type { RetryPolicy } from "./fetch/search-fetch.ts";
import type { StorySource } from "./fetch/source.ts";
import type { Limiter } from "./limiter.ts";
import type { Progress } from "./progress.ts";
import type { TimeBudget } from "./summarise/budget.ts";
import type { SummaryCache } from "./summarise/cache.ts";
import type { Calibration } from "./summarise/calibration.ts";
import type { ModelHealth } from "./summarise/model-health.ts";
import type { ModelClient } from "./summarise/models/model-client.ts";
import type { ArticleSource, Coverage, SourceName } from "./types.ts";

export type PipelineConfig = Pick<
  DigestConfig,
  | "searchUrl"
  | "lobstersUrl"
  | "model"
  | "language"
  | "maxComments"
  | "numCtx"
  | "concurrency"
  | "fetchConcurrency"
  | "searchTimeoutMs"
  | "articleTimeoutMs"
  | "articleMaxBytes"
  | "server"
  | "allowedHosts"
>;

export interface PipelineStats {
  /** Summaries the model wrote in this run. */
  generated: number;
  /** Summaries read from the cache. */
  cached: number;
  /** Summaries that were attempted and failed. */
  failed: number;
  /** Stories the time budget left out, re-planned at the measured rates (absent: none). */
  leftOut?: number;
}

export interface PipelineDeps {
  config: PipelineConfig;
  /** The sources' clients, opened once for the run; default: each one a story names, opened here. */
  sources?: ReadonlyMap<SourceName, StorySource>;
  fetch?: typeof fetch;
  /** Writes the summaries. */
  model: ModelClient;
  /** Sizes each prompt and its timeout; default: no budget, rates learnt from a CPU prior. */
  budget?: TimeBudget;
  /** Stops the run's calls once the model is gone; default: a fresh watch for this run. */
  health?: ModelHealth;
  cache?: SummaryCache;
  logger: Logger;
  progress: Progress;
  stats?: PipelineStats;
  sleep?: (ms: number) => Promise<void>;
  retryPolicy?: RetryPolicy;
  /** DNS for the SSRF check of story links; tests pass one. */
  resolve?: Resolver;
  /** Ctrl-C, the model gone or a story not written: every download and model call stops. */
  signal?: AbortSignal;
  /** The clock the cache's reuse rules read (ms); Date.now by default. */
  now?: () => number;
  /** The model's token calibration; by default read from the cache, updated by each answer. */
  calibration?: Calibration;
}

/** One half of a story's digest: a summary (or null) and why something is missing. */
export interface Part {
  summary: string | null;
  notes: string[];
  /** What an article summary was made from. */
  source?: ArticleSource;
  /** Words of the article (or the post's own text) a reader would open: its reading time. */
  words?: number;
  /** How much of the article or discussion the model saw. */
  coverage?: Partial<Coverage>;
  /** The time budget had no room for it when its turn came, and nothing earlier stands in. */
  leftOut?: boolean;
}

/** What every step of one run shares. */
export interface PipelineContext extends PipelineDeps {
  sources: ReadonlyMap<SourceName, StorySource>;
  budget: TimeBudget;
  health: ModelHealth;
  fetchLimit: Limiter;
  llmLimit: Limiter;
  stats: PipelineStats;
  calibration: Calibration;
}
