import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import parseDuration from "parse-duration";
import { z } from "zod";
import { type Env, httpUrl, intInRange, withoutEmpty } from "../config/env.ts";
import { type Field, type Flags, loadFields } from "../config/fields.ts";
import { type AllowList, parseAllowList } from "../http/ssrf.ts";
import { errorMessage } from "../text/error-message.ts";
import { catchUpMs, EDITION_FIELDS, type EditionConfig } from "./edition-config.ts";
import { emailSettings, localSender, READER_FIELDS, type ReaderConfig } from "./reader-config.ts";

import {
  APIS,
  type Api,
  DEFAULT_OLLAMA_MODEL,
  MODEL_APIS,
  type ModelApi,
  type ModelServer,
} from "./summarise/models/apis.ts";

export type { Api } from "./summarise/models/apis.ts";
export const DEFAULT_MODEL = DEFAULT_OLLAMA_MODEL;
export const DEFAULT_NUM_CTX = 8192;
/** Summaries in English unless --language says otherwise. */
export const DEFAULT_LANGUAGE = "en";
export const FORMATS = ["markdown", "json", "html"] as const;
export type Format = (typeof FORMATS)[number];

export interface DigestConfig extends ReaderConfig, EditionConfig {
  searchUrl: string;
  /** The summaries' language, a canonical BCP 47 code ("en", "de", "pt-BR"). */
  language: string;
  /** Which API the model server speaks: a row of MODEL_APIS (--api / LLM_API). */
  api: Api;
  /** That API's settings: its URL, model, key and timeout, each read from its own variables. */
  server: ModelServer;
  /**
   * The name the pipeline gives the cache: the model as configured (empty when the server is to
   * choose); runDigest replaces it with cachedModelName of the model the server confirmed.
   */
  model: string;
  maxComments: number;
  /** Context window asked of Ollama and the prompts are fitted to (capped by the model's own). */
  numCtx: number;
  limit: number;
  concurrency: number;
  fetchConcurrency: number;
  searchTimeoutMs: number;
  articleTimeoutMs: number;
  /** Model time the run may take: 0 none; unset, 20 min unless the model runs on a GPU. */
  timeBudgetMs: number | undefined;
  articleMaxBytes: number;
  format: Format;
  out: string | undefined;
  /** Folder of the daily archive: a page and JSON per day, an index and an Atom feed. */
  archive: string | undefined;
  /** Story hosts and addresses on loopback or private networks the digest may fetch anyway. */
  allowedHosts: AllowList;
  /** SQLite file of the summary cache, or undefined with --no-cache. */
  cacheFile: string | undefined;
}

type DigestKey = Exclude<keyof DigestConfig, "cacheFile" | "server"> | ApiSettingKey;
/** The settings fields each row of MODEL_APIS adds: `ollamaUrl`, `openaiTimeoutMs`, … */
type ApiSettingKey = `${Api}${"Url" | "Model" | "ApiKey" | "TimeoutMs"}`;

// Ollama names (llama3.2, qwen2.5:7b) and server ids (a llama-server's model path, vLLM's
// org/name, LM Studio's name@quant): anything printable without spaces.
const modelName = z
  .string()
  .regex(
    /^[^\s\p{Cc}]{1,512}$/u,
    "expected a model name without spaces, such as llama3.2, qwen2.5:7b or /models/llama-3.2-3b.gguf",
  );

const api = z.enum(APIS, { error: `expected one of ${APIS.join(", ")}` });

// A header value: printable ASCII, no spaces (a newline in it would be refused by fetch anyway).
const apiKey = z.string().regex(/^[\x21-\x7e]{1,4096}$/, "expected printable ASCII without spaces");

/** `15m`, `1h`, `1h30m`, `90s`; `0` means no budget. A bare number has no unit and is refused. */
const duration = z.string().transform((value, context) => {
  const text = value.trim();
  if (text === "0") return 0;
  const ms = /[a-z]/i.test(text) ? parseDuration(text) : null;
  if (ms === null || ms === undefined || !Number.isFinite(ms) || ms < 1000 || ms > 7 * 86_400_000) {
    context.addIssue({
      code: "custom",
      message:
        "expected a duration such as 15m, 1h or 1h30m (at least 1s, at most 7d), or 0 for none",
    });
    return z.NEVER;
  }
  return Math.round(ms);
});

/**
 * A BCP 47 language code, canonical ("pt-br" → "pt-BR"), one Intl can name, led by an ISO 639
 * language of 2 or 3 letters (BCP 47's longer language subtags are unassigned: "German" is not one).
 */
const languageTag = z.string().transform((value, context) => {
  try {
    const [tag] = Intl.getCanonicalLocales(value.trim());
    if (tag !== undefined && tag.length <= 35 && /^[a-z]{2,3}(-|$)/.test(tag)) {
      new Intl.DisplayNames(["en"], { type: "language" }).of(tag);
      return tag;
    }
  } catch {
    // Not a language tag: the issue below.
  }
  context.addIssue({
    code: "custom",
    message: "expected a BCP 47 language code such as en, de, fr or pt-BR",
  });
  return z.NEVER;
});

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
  ...EDITION_FIELDS,
  ...READER_FIELDS,
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
    description:
      "write the digest to this regular file instead of stdout (- or /dev/stdout for stdout, /dev/stderr for stderr); a symlink is followed to a regular file; a device, FIFO, folder or anything else in /dev or /proc is refused",
  },
  {
    key: "language",
    env: "DIGEST_LANGUAGE",
    flag: "language",
    hint: "code",
    schema: languageTag,
    default: DEFAULT_LANGUAGE,
    description:
      "language of the summaries and the page's dates: a BCP 47 code such as de, fr or pt-BR (the page's own words stay English)",
  },
  {
    key: "api",
    env: "LLM_API",
    flag: "api",
    hint: APIS.join("|"),
    schema: api,
    default: "ollama",
    description:
      "the model server's API: ollama, or openai for any OpenAI-compatible server (llama-server, LM Studio, vLLM)",
  },
  {
    key: "archive",
    env: "DIGEST_ARCHIVE",
    flag: "archive",
    hint: "dir",
    schema: z.string().min(1, "expected a folder path"),
    description:
      "also keep the day's page (YYYY-MM-DD.html and .json), index.html and an Atom feed.xml of the last 7 days in this folder",
  },
  {
    key: "model",
    flag: "model",
    // -m, as in simonw's llm: the flag a daily reader changes most.
    alias: "m",
    hint: "name",
    schema: modelName,
    defaultText: `the API's own variable: ${APIS.map((name) => MODEL_APIS[name].model.env).join(", ")}`,
    description: "model that writes the summaries, whatever the API",
  },
  ...APIS.flatMap((name) => apiFields(name, MODEL_APIS[name])),
  {
    key: "numCtx",
    env: "OLLAMA_NUM_CTX",
    flag: "num-ctx",
    hint: "tokens",
    schema: intInRange(2048, 1_048_576),
    default: DEFAULT_NUM_CTX,
    description:
      "context window (tokens) the prompts fill, asked of Ollama as options.num_ctx; capped by the model's or server's own",
  },
  {
    key: "concurrency",
    env: "DIGEST_CONCURRENCY",
    flag: "concurrency",
    hint: "n",
    schema: intInRange(1, 16),
    default: 1,
    description: "model calls in flight at once",
  },
  {
    key: "maxComments",
    env: "MAX_COMMENTS_PER_STORY",
    flag: "max-comments",
    hint: "n",
    schema: intInRange(1, 1000),
    default: 1000,
    description: "comments fetched per story (the search API gives at most 1000)",
  },
  {
    key: "searchUrl",
    env: "HN_SEARCH_URL",
    flag: "search-url",
    hint: "url",
    schema: httpUrl("https://hn.algolia.com/api/v1"),
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
    key: "timeBudgetMs",
    env: "DIGEST_TIME_BUDGET",
    flag: "time-budget",
    hint: "duration",
    schema: duration,
    defaultText: "20m on a CPU, none on a GPU",
    description:
      "model time the digest may take (15m, 1h; 0 for none): prompts are sized to fit it at the measured rates",
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

/** The settings of one model API, each with the variable (and flag) its row names. */
function apiFields(name: Api, api: ModelApi): Field<DigestKey>[] {
  const fields: Field<DigestKey>[] = [
    {
      key: `${name}Url`,
      env: api.url.env,
      flag: api.url.flag,
      hint: "url",
      schema: httpUrl(),
      default: api.url.default,
      description: api.url.description,
    },
    {
      key: `${name}Model`,
      env: api.model.env,
      schema: modelName,
      ...(api.model.default === undefined ? {} : { default: api.model.default }),
      ...(api.model.defaultText === undefined ? {} : { defaultText: api.model.defaultText }),
      description: `the model with --api=${name}, when --model is not given`,
    },
    {
      key: `${name}TimeoutMs`,
      env: api.timeout.env,
      flag: api.timeout.flag,
      hint: "ms",
      schema: intInRange(1000, 3_600_000),
      defaultText: "none",
      description: `ceiling on one model call's timeout with --api=${name} (ms); each call's own follows its expected time at the measured rates`,
    },
  ];
  if (api.apiKey === undefined) return fields;
  return [
    ...fields,
    {
      key: `${name}ApiKey`,
      env: api.apiKey.env,
      schema: apiKey,
      secret: true,
      defaultText: "none",
      description: `key sent as \`Authorization: Bearer\` with --api=${name}, never shown`,
    },
  ];
}

/** The chosen API's settings; --model beats the API's own variable. */
function serverSettings(values: Record<string, unknown>, api: Api): ModelServer {
  const setting = (name: string) => values[`${api}${name}`];
  return {
    url: setting("Url") as string,
    model: (values.model ?? setting("Model")) as string | undefined,
    apiKey: setting("ApiKey") as string | undefined,
    timeoutMs: setting("TimeoutMs") as number | undefined,
  };
}

/** Flags as citty hands them over: strings for valued flags, `cache` as a boolean. */
export type DigestFlags = Flags;

/**
 * Parses env and flags into the digest's settings, once. Flags override env; empty env values
 * count as unset. A bad value throws a one-line ConfigError naming the variable or flag.
 */
export function loadDigestConfig(env: Env, flags: DigestFlags = {}): DigestConfig {
  const { values } = loadFields(FIELDS, env, flags);
  const config = values as Record<DigestKey, unknown> & Omit<DigestConfig, "cacheFile" | "server">;
  const server = serverSettings(values, config.api);
  const settings = new Set<string>(APIS.flatMap((name) => settingKeys(name)));
  if (config.emailTo !== undefined) config.localSender = localSender(withoutEmpty(env));
  // --email-to without SMTP_URL, or without a sender, stops here rather than after the summaries.
  emailSettings(config);
  catchUpMs(config);
  const common = Object.fromEntries(
    Object.entries(config).filter(([key]) => !settings.has(key)),
  ) as Omit<DigestConfig, "cacheFile" | "server" | "model">;
  return {
    ...common,
    // `--out -` is standard output, as in curl and tar.
    out: config.out === "-" ? undefined : config.out,
    server,
    model: server.model ?? "",
    cacheFile: flags.cache !== false ? cacheFilePath(env) : undefined,
  };
}

function settingKeys(api: Api): ApiSettingKey[] {
  return [`${api}Url`, `${api}Model`, `${api}ApiKey`, `${api}TimeoutMs`];
}

/** `$XDG_CACHE_HOME/hn-digest/summaries.sqlite`, or `~/.cache/…` when unset or relative. */
export function cacheFilePath(env: Env): string {
  const cleaned = withoutEmpty(env);
  const xdg = cleaned.XDG_CACHE_HOME;
  const base = xdg && isAbsolute(xdg) ? xdg : join(cleaned.HOME ?? homedir(), ".cache");
  return join(base, "hn-digest", "summaries.sqlite");
}
