import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import { z } from "zod";
import { type Env, httpUrl, intInRange, parseEnv, withoutEmpty } from "../config/env.ts";
import { ConfigError } from "../config/errors.ts";

export const DEFAULT_MODEL = "llama3.2";
export const DEFAULT_NUM_CTX = 8192;
export const FORMATS = ["markdown", "json", "html"] as const;
export type Format = (typeof FORMATS)[number];

export interface DigestConfig {
  searchUrl: string;
  ollamaUrl: string;
  model: string;
  maxComments: number;
  /** Context window asked of Ollama and the prompts are fitted to (capped by the model's own). */
  numCtx: number;
  limit: number;
  concurrency: number;
  fetchConcurrency: number;
  searchTimeoutMs: number;
  articleTimeoutMs: number;
  ollamaTimeoutMs: number;
  articleMaxBytes: number;
  format: Format;
  out: string | undefined;
  /** SQLite file of the summary cache, or undefined with --no-cache. */
  cacheFile: string | undefined;
}

interface Field {
  key: Exclude<keyof DigestConfig, "cacheFile">;
  env?: string;
  flag: string;
  schema: z.ZodType;
  default?: unknown;
  /** Shown in --help as `--flag=<hint>`. */
  hint: string;
  description: string;
}

const modelName = z
  .string()
  .regex(/^[A-Za-z0-9][\w.\-/:]*$/, "expected an Ollama model name such as llama3.2 or qwen2.5:7b");

const outPath = z.string().min(1, "expected a file path");

const format = z.enum(FORMATS, { error: `expected one of ${FORMATS.join(", ")}` });

/**
 * Every setting, with its env var (if any), its flag, its form and its default. The citty
 * arguments and the README table are written from the same facts, so keep them in step.
 */
export const FIELDS: readonly Field[] = [
  {
    key: "limit",
    flag: "limit",
    hint: "n",
    schema: intInRange(1, 1000),
    default: 10,
    description: "number of front-page stories",
  },
  {
    key: "format",
    flag: "format",
    hint: "markdown|json|html",
    schema: format,
    default: "markdown",
    description: "output format: markdown, json or html",
  },
  {
    key: "out",
    flag: "out",
    hint: "file",
    schema: outPath,
    description: "write the digest to this file instead of stdout",
  },
  {
    key: "model",
    env: "OLLAMA_MODEL",
    flag: "model",
    hint: "name",
    schema: modelName,
    default: DEFAULT_MODEL,
    description: "Ollama model that writes the summaries",
  },
  {
    key: "ollamaUrl",
    env: "OLLAMA_ENDPOINT_URL",
    flag: "ollama-url",
    hint: "url",
    schema: httpUrl(),
    default: "http://localhost:11434",
    description: "Ollama base URL",
  },
  {
    key: "numCtx",
    env: "OLLAMA_NUM_CTX",
    flag: "num-ctx",
    hint: "tokens",
    schema: intInRange(2048, 1_048_576),
    default: DEFAULT_NUM_CTX,
    description:
      "context window (tokens) asked of Ollama as options.num_ctx and filled by the prompts; capped by the model's own",
  },
  {
    key: "concurrency",
    env: "DIGEST_CONCURRENCY",
    flag: "concurrency",
    hint: "n",
    schema: intInRange(1, 16),
    default: 1,
    description: "Ollama calls in flight at once",
  },
  {
    key: "maxComments",
    env: "MAX_COMMENTS_PER_STORY",
    flag: "max-comments",
    hint: "n",
    schema: intInRange(1, 1000),
    default: 200,
    description: "comments fetched per story (the search API gives at most 1000)",
  },
  {
    key: "searchUrl",
    env: "HN_SEARCH_URL",
    flag: "search-url",
    hint: "url",
    schema: httpUrl(),
    default: "https://hn.algolia.com/api/v1",
    description: "Hacker News search API base URL",
  },
  {
    key: "fetchConcurrency",
    env: "DIGEST_FETCH_CONCURRENCY",
    flag: "fetch-concurrency",
    hint: "n",
    schema: intInRange(1, 32),
    default: 4,
    description: "comment and article fetches in flight at once",
  },
  {
    key: "searchTimeoutMs",
    env: "HN_SEARCH_TIMEOUT_MS",
    flag: "search-timeout-ms",
    hint: "ms",
    schema: intInRange(100, 600_000),
    default: 10_000,
    description: "timeout of one search API request (ms)",
  },
  {
    key: "articleTimeoutMs",
    env: "ARTICLE_TIMEOUT_MS",
    flag: "article-timeout-ms",
    hint: "ms",
    schema: intInRange(100, 600_000),
    default: 10_000,
    description: "timeout of one article download (ms)",
  },
  {
    key: "articleMaxBytes",
    env: "ARTICLE_MAX_BYTES",
    flag: "article-max-bytes",
    hint: "bytes",
    schema: intInRange(1024, 100_000_000),
    default: 2_000_000,
    description: "largest article body read (bytes)",
  },
  {
    key: "ollamaTimeoutMs",
    env: "OLLAMA_TIMEOUT_MS",
    flag: "ollama-timeout-ms",
    hint: "ms",
    schema: intInRange(1000, 3_600_000),
    default: 300_000,
    description: "timeout of one Ollama call (ms)",
  },
];

/** Flags as citty hands them over: strings for valued flags, `cache` as a boolean. */
export type DigestFlags = Record<string, string | boolean | undefined>;

/**
 * Parses env and flags into the digest's settings, once. Flags override env; empty env values
 * count as unset. A bad value throws a one-line ConfigError naming the variable or flag.
 */
export function loadDigestConfig(env: Env, flags: DigestFlags = {}): DigestConfig {
  const envShape: Record<string, z.ZodType> = {};
  const flagShape: Record<string, z.ZodType> = {};
  const flagValues: Env = {};
  for (const field of FIELDS) {
    if (field.env) envShape[field.env] = field.schema.optional();
    flagShape[`--${field.flag}`] = field.schema.optional();
    const value = flags[field.flag];
    if (value === undefined) continue;
    if (typeof value !== "string" || value.trim() === "") {
      throw new ConfigError(`--${field.flag} needs a value: ${expectedForm(field)}`);
    }
    flagValues[`--${field.flag}`] = value;
  }
  const fromEnv = parseEnv(z.object(envShape), env) as Record<string, unknown>;
  const fromFlags = parseEnv(z.object(flagShape), flagValues) as Record<string, unknown>;

  const values: Record<string, unknown> = {};
  for (const field of FIELDS) {
    values[field.key] =
      fromFlags[`--${field.flag}`] ?? (field.env ? fromEnv[field.env] : undefined) ?? field.default;
  }
  const useCache = flags.cache !== false;
  return {
    ...(values as Omit<DigestConfig, "cacheFile">),
    cacheFile: useCache ? cacheFilePath(env) : undefined,
  };
}

/** `$XDG_CACHE_HOME/hn-digest/summaries.sqlite`, or `~/.cache/…` when unset or relative. */
export function cacheFilePath(env: Env): string {
  const cleaned = withoutEmpty(env);
  const xdg = cleaned.XDG_CACHE_HOME;
  const base = xdg && isAbsolute(xdg) ? xdg : join(cleaned.HOME ?? homedir(), ".cache");
  return join(base, "hn-digest", "summaries.sqlite");
}

function expectedForm(field: Field): string {
  const result = field.schema.safeParse("");
  return result.success
    ? "expected a value"
    : (result.error.issues[0]?.message ?? "expected a value");
}
