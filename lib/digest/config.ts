import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import { z } from "zod";
import { type Env, httpUrl, intInRange, withoutEmpty } from "../config/env.ts";
import { type Field, type Flags, loadFields } from "../config/fields.ts";
import { type AllowList, parseAllowList } from "../http/ssrf.ts";
import { errorMessage } from "../text/error-message.ts";

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
  /** Story hosts and addresses on loopback or private networks the digest may fetch anyway. */
  allowedHosts: AllowList;
  /** SQLite file of the summary cache, or undefined with --no-cache. */
  cacheFile: string | undefined;
}

type DigestKey = Exclude<keyof DigestConfig, "cacheFile">;

const modelName = z
  .string()
  .regex(/^[A-Za-z0-9][\w.\-/:]*$/, "expected an Ollama model name such as llama3.2 or qwen2.5:7b");

const outPath = z.string().min(1, "expected a file path");

const format = z.enum(FORMATS, { error: `expected one of ${FORMATS.join(", ")}` });

/** WEBHOOK_ALLOWED_HOSTS's form (the same guard), with the message naming the entry. */
const allowList = z.string().transform((value, context) => {
  try {
    return parseAllowList(value);
  } catch (error) {
    const message = errorMessage(error);
    context.addIssue({
      code: "custom",
      message: message.replace(/^\S+ entry (.*) is invalid: /, "entry $1: "),
    });
    return z.NEVER;
  }
});

/**
 * Every setting, with its env var and/or flag, its form and its default. Parsing, the citty
 * arguments and --help are written from this table (lib/config/fields.ts); docs/digest.md lists
 * the same facts, so keep it in step.
 */
export const FIELDS: readonly Field<DigestKey>[] = [
  {
    key: "limit",
    flag: "limit",
    alias: "n",
    hint: "n",
    schema: intInRange(1, 1000),
    default: 10,
    description: "number of front-page stories",
  },
  {
    key: "format",
    flag: "format",
    alias: "f",
    hint: "markdown|json|html",
    schema: format,
    default: "markdown",
    description: "output format: markdown, json or html",
  },
  {
    key: "out",
    flag: "out",
    alias: "o",
    hint: "file",
    schema: outPath,
    description: "write the digest to this file instead of stdout",
  },
  {
    key: "model",
    env: "OLLAMA_MODEL",
    flag: "model",
    // -m, as in simonw's llm: the flag a daily reader changes most.
    alias: "m",
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
  {
    key: "allowedHosts",
    env: "DIGEST_ALLOWED_HOSTS",
    schema: allowList,
    default: () => [],
    defaultText: "none",
    description:
      "story hosts on loopback or private networks that may be fetched anyway: host, host:port or CIDR, comma-separated (same form as WEBHOOK_ALLOWED_HOSTS)",
  },
];

/** Flags as citty hands them over: strings for valued flags, `cache` as a boolean. */
export type DigestFlags = Flags;

/**
 * Parses env and flags into the digest's settings, once. Flags override env; empty env values
 * count as unset. A bad value throws a one-line ConfigError naming the variable or flag.
 */
export function loadDigestConfig(env: Env, flags: DigestFlags = {}): DigestConfig {
  const { values } = loadFields(FIELDS, env, flags);
  return {
    ...(values as Omit<DigestConfig, "cacheFile">),
    cacheFile: flags.cache !== false ? cacheFilePath(env) : undefined,
  };
}

/** `$XDG_CACHE_HOME/hn-digest/summaries.sqlite`, or `~/.cache/…` when unset or relative. */
export function cacheFilePath(env: Env): string {
  const cleaned = withoutEmpty(env);
  const xdg = cleaned.XDG_CACHE_HOME;
  const base = xdg && isAbsolute(xdg) ? xdg : join(cleaned.HOME ?? homedir(), ".cache");
  return join(base, "hn-digest", "summaries.sqlite");
}
