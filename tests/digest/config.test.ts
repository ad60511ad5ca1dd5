import { describe, expect, test } from "bun:test";
import { ConfigError } from "../../lib/config/errors.ts";
import { cacheFilePath, DEFAULT_MODEL, loadDigestConfig } from "../../lib/digest/config.ts";

const HOME = { HOME: "/home/ada" };

function errorOf(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected an error");
}

describe("loadDigestConfig()", () => {
  test("uses the documented defaults when nothing is set", () => {
    const config = loadDigestConfig(HOME);
    expect(config).toEqual({
      searchUrl: "https://hn.algolia.com/api/v1",
      sources: ["hn"],
      lobstersUrl: "https://lobste.rs",
      since: undefined,
      days: undefined,
      language: "en",
      api: "ollama",
      server: {
        url: "http://localhost:11434",
        model: DEFAULT_MODEL,
        apiKey: undefined,
        timeoutMs: undefined,
      },
      model: DEFAULT_MODEL,
      maxComments: 1000,
      numCtx: 8192,
      limit: 10,
      concurrency: 1,
      fetchConcurrency: 4,
      searchTimeoutMs: 10_000,
      articleTimeoutMs: 10_000,
      timeBudgetMs: undefined,
      archive: undefined,
      articleMaxBytes: 2_000_000,
      format: "markdown",
      out: undefined,
      allowedHosts: [],
      minPoints: 0,
      minComments: 0,
      skip: [],
      only: [],
      emailTo: undefined,
      smtp: undefined,
      emailFrom: undefined,
      cacheFile: "/home/ada/.cache/hn-digest/summaries.sqlite",
    });
  });

  test("reads every env var", () => {
    const config = loadDigestConfig({
      ...HOME,
      OLLAMA_ENDPOINT_URL: "http://gpu-box:11434/",
      OLLAMA_MODEL: "qwen2.5:7b",
      MAX_COMMENTS_PER_STORY: "300",
      HN_SEARCH_URL: "http://127.0.0.1:9999/api/v1",
      OLLAMA_NUM_CTX: "16384",
      DIGEST_CONCURRENCY: "2",
      DIGEST_FETCH_CONCURRENCY: "8",
      HN_SEARCH_TIMEOUT_MS: "2000",
      ARTICLE_TIMEOUT_MS: "3000",
      ARTICLE_MAX_BYTES: "4096",
      OLLAMA_TIMEOUT_MS: "60000",
      DIGEST_TIME_BUDGET: "1h30m",
    });
    expect(config).toMatchObject({
      server: { url: "http://gpu-box:11434", model: "qwen2.5:7b", timeoutMs: 60000 },
      model: "qwen2.5:7b",
      maxComments: 300,
      searchUrl: "http://127.0.0.1:9999/api/v1",
      numCtx: 16384,
      concurrency: 2,
      fetchConcurrency: 8,
      searchTimeoutMs: 2000,
      articleTimeoutMs: 3000,
      articleMaxBytes: 4096,
      timeBudgetMs: 90 * 60_000,
    });
  });

  test("lets flags override env vars", () => {
    const config = loadDigestConfig(
      { ...HOME, OLLAMA_MODEL: "llama3.2", MAX_COMMENTS_PER_STORY: "20", OLLAMA_NUM_CTX: "2048" },
      { model: "mistral", "max-comments": "5", limit: "3", format: "json", out: "d.json" },
    );
    expect(config).toMatchObject({
      model: "mistral",
      maxComments: 5,
      limit: 3,
      format: "json",
      out: "d.json",
      numCtx: 2048,
    });
  });

  test("reads --time-budget as a duration, 0 meaning none, over DIGEST_TIME_BUDGET", () => {
    const budget = (flag: string) =>
      loadDigestConfig({ ...HOME, DIGEST_TIME_BUDGET: "1h" }, { "time-budget": flag }).timeBudgetMs;
    expect(budget("15m")).toBe(900_000);
    expect(budget("1h")).toBe(3_600_000);
    expect(budget("90s")).toBe(90_000);
    expect(budget("0")).toBe(0);
    expect(loadDigestConfig({ ...HOME, DIGEST_TIME_BUDGET: "45m" }).timeBudgetMs).toBe(2_700_000);
  });

  test("treats empty env values as unset", () => {
    expect(
      loadDigestConfig({ ...HOME, OLLAMA_MODEL: "", MAX_COMMENTS_PER_STORY: " " }),
    ).toMatchObject({ model: DEFAULT_MODEL, maxComments: 1000 });
  });

  test.each([
    ["MAX_COMMENTS_PER_STORY", "abc", "expected a whole number from 1 to 1000"],
    ["MAX_COMMENTS_PER_STORY", "0", "expected a whole number from 1 to 1000"],
    ["MAX_COMMENTS_PER_STORY", "-3", "expected a whole number from 1 to 1000"],
    ["MAX_COMMENTS_PER_STORY", "2.5", "expected a whole number from 1 to 1000"],
    ["OLLAMA_ENDPOINT_URL", "localhost:11434", "expected an http:// or https:// URL"],
    ["OLLAMA_ENDPOINT_URL", "ftp://host", "expected an http:// or https:// URL"],
    ["HN_SEARCH_URL", "hn.algolia.com/api/v1", "expected an http:// or https:// URL"],
    ["OLLAMA_NUM_CTX", "big", "expected a whole number from 2048 to 1048576"],
    ["OLLAMA_NUM_CTX", "100", "expected a whole number from 2048 to 1048576"],
    ["OLLAMA_MODEL", "llama 3", "expected a model name without spaces"],
    ["LLM_API", "anthropic", "expected one of ollama, openai"],
    ["OPENAI_BASE_URL", "localhost:8080/v1", "expected an http:// or https:// URL"],
    ["OPENAI_MODEL", "my model", "expected a model name without spaces"],
    ["DIGEST_CONCURRENCY", "0", "expected a whole number from 1 to 16"],
    ["DIGEST_FETCH_CONCURRENCY", "many", "expected a whole number from 1 to 32"],
    ["HN_SEARCH_TIMEOUT_MS", "10s", "expected a whole number from 100 to 600000"],
    ["ARTICLE_TIMEOUT_MS", "-1", "expected a whole number from 100 to 600000"],
    ["ARTICLE_MAX_BYTES", "1e6", "expected a whole number from 1024 to 100000000"],
    ["OLLAMA_TIMEOUT_MS", "0", "expected a whole number from 1000 to 3600000"],
    ["DIGEST_TIME_BUDGET", "15", "expected a duration such as 15m, 1h or 1h30m"],
    ["DIGEST_TIME_BUDGET", "soon", "expected a duration such as 15m, 1h or 1h30m"],
    ["DIGEST_TIME_BUDGET", "-5m", "expected a duration such as 15m, 1h or 1h30m"],
    ["DIGEST_TIME_BUDGET", "100ms", "expected a duration such as 15m, 1h or 1h30m"],
    ["DIGEST_LANGUAGE", "German", "expected a BCP 47 language code such as en, de, fr or pt-BR"],
    ["DIGEST_LANGUAGE", "de_DE", "expected a BCP 47 language code such as en, de, fr or pt-BR"],
    ["DIGEST_LANGUAGE", "x-", "expected a BCP 47 language code such as en, de, fr or pt-BR"],
  ])("rejects %s=%s with one line naming it", (name, value, expected) => {
    const error = errorOf(() => loadDigestConfig({ ...HOME, [name]: value }));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toStartWith(`${name}="${value}" is invalid: `);
    expect(error.message).toContain(expected);
    expect(error.message).not.toContain("\n");
  });

  test.each([
    ["limit", "ten", '--limit="ten" is invalid: expected a whole number from 1 to 1000'],
    ["concurrency", "0", '--concurrency="0" is invalid: expected a whole number from 1 to 16'],
    ["format", "pdf", '--format="pdf" is invalid: expected one of markdown, json, html'],
    ["api", "llama", '--api="llama" is invalid: expected one of ollama, openai'],
    [
      "openai-url",
      "gpu:8080",
      '--openai-url="gpu:8080" is invalid: expected an http:// or https:// URL',
    ],
    [
      "ollama-url",
      "gpu:11434",
      '--ollama-url="gpu:11434" is invalid: expected an http:// or https:// URL',
    ],
  ])("rejects --%s %s naming the flag", (flag, value, message) => {
    const error = errorOf(() => loadDigestConfig(HOME, { [flag]: value }));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toStartWith(message);
  });

  test("--language and DIGEST_LANGUAGE take a BCP 47 code, written canonically; English by default", () => {
    expect(loadDigestConfig(HOME).language).toBe("en");
    expect(loadDigestConfig({ ...HOME, DIGEST_LANGUAGE: "de" }).language).toBe("de");
    expect(
      loadDigestConfig({ ...HOME, DIGEST_LANGUAGE: "de" }, { language: "pt-br" }).language,
    ).toBe("pt-BR");
    expect(errorOf(() => loadDigestConfig(HOME, { language: "klingon!" })).message).toBe(
      '--language="klingon!" is invalid: expected a BCP 47 language code such as en, de, fr or pt-BR',
    );
  });

  test("rejects a valued flag given without a value", () => {
    const error = errorOf(() => loadDigestConfig(HOME, { limit: "" }));
    expect(error.message).toBe("--limit needs a value: expected a whole number from 1 to 1000");
  });

  test("takes a context window of at least 2048 tokens", () => {
    expect(loadDigestConfig(HOME, { "num-ctx": "32768" }).numCtx).toBe(32768);
    expect(errorOf(() => loadDigestConfig(HOME, { "num-ctx": "1024" })).message).toBe(
      '--num-ctx="1024" is invalid: expected a whole number from 2048 to 1048576',
    );
  });

  test("reads DIGEST_ALLOWED_HOSTS in the form of WEBHOOK_ALLOWED_HOSTS", () => {
    const config = loadDigestConfig({
      ...HOME,
      DIGEST_ALLOWED_HOSTS: "localhost:8080, 10.0.0.0/8",
    });
    expect(config.allowedHosts).toHaveLength(2);
    expect(config.allowedHosts[0]).toEqual({ kind: "host", host: "localhost", port: 8080 });
    const error = errorOf(() => loadDigestConfig({ ...HOME, DIGEST_ALLOWED_HOSTS: "a b" }));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toBe(
      'DIGEST_ALLOWED_HOSTS="a b" is invalid: entry "a b": expected a host, host:port or CIDR, e.g. localhost:9000 or 10.0.0.0/8',
    );
  });

  test("--api=openai reads the OpenAI-compatible server's settings", () => {
    const config = loadDigestConfig(
      {
        ...HOME,
        LLM_API: "openai",
        OPENAI_BASE_URL: "http://gpu-box:1234/v1/",
        OPENAI_MODEL: "/models/Llama-3.2-3B-Instruct-Q4_K_M.gguf",
        OPENAI_API_KEY: "sk-local-123",
      },
      {},
    );
    expect(config).toMatchObject({
      api: "openai",
      server: {
        url: "http://gpu-box:1234/v1",
        model: "/models/Llama-3.2-3B-Instruct-Q4_K_M.gguf",
        apiKey: "sk-local-123",
        timeoutMs: undefined,
      },
    });
    expect(
      loadDigestConfig(HOME, { api: "openai", "openai-url": "http://h:8000/v1" }),
    ).toMatchObject({ api: "openai", server: { url: "http://h:8000/v1", model: undefined } });
  });

  test("--model names the model of either API; OLLAMA_MODEL is Ollama's alone", () => {
    const env = { ...HOME, LLM_API: "openai", OLLAMA_MODEL: "qwen2.5:7b", OPENAI_MODEL: "served" };
    expect(loadDigestConfig(env).server.model).toBe("served");
    expect(loadDigestConfig(env, { model: "other" }).server.model).toBe("other");
    const { OPENAI_MODEL: _, ...withoutOpenAiModel } = env;
    expect(loadDigestConfig(withoutOpenAiModel).server.model).toBeUndefined();
  });

  test("each API's calls are capped by its own timeout variable; OLLAMA_TIMEOUT_MS is Ollama's alone", () => {
    const env = { ...HOME, OLLAMA_TIMEOUT_MS: "60000", OPENAI_TIMEOUT_MS: "90000" };
    expect(loadDigestConfig(env).server.timeoutMs).toBe(60000);
    expect(loadDigestConfig({ ...env, LLM_API: "openai" }).server.timeoutMs).toBe(90000);
    expect(
      loadDigestConfig({ ...HOME, LLM_API: "openai", OLLAMA_TIMEOUT_MS: "60000" }).server.timeoutMs,
    ).toBeUndefined();
    expect(
      loadDigestConfig(HOME, { api: "openai", "openai-timeout-ms": "5000" }).server.timeoutMs,
    ).toBe(5000);
    expect(errorOf(() => loadDigestConfig({ ...HOME, OPENAI_TIMEOUT_MS: "soon" })).message).toBe(
      'OPENAI_TIMEOUT_MS="soon" is invalid: expected a whole number from 1000 to 3600000',
    );
  });

  test("never repeats OPENAI_API_KEY in its message", () => {
    const error = errorOf(() =>
      loadDigestConfig({ ...HOME, OPENAI_API_KEY: "sk-secret with space" }),
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toBe(
      "OPENAI_API_KEY is invalid: expected printable ASCII without spaces",
    );
    expect(error.message).not.toContain("sk-secret");
  });

  test("--no-cache turns the cache off", () => {
    expect(loadDigestConfig(HOME, { cache: false }).cacheFile).toBeUndefined();
    expect(loadDigestConfig(HOME, { cache: true }).cacheFile).toBeString();
  });
});

describe("cacheFilePath()", () => {
  test("uses $XDG_CACHE_HOME when it is absolute", () => {
    expect(cacheFilePath({ XDG_CACHE_HOME: "/var/cache/me", HOME: "/home/ada" })).toBe(
      "/var/cache/me/hn-digest/summaries.sqlite",
    );
  });

  test("falls back to ~/.cache when $XDG_CACHE_HOME is unset, empty or relative", () => {
    const expected = "/home/ada/.cache/hn-digest/summaries.sqlite";
    expect(cacheFilePath({ HOME: "/home/ada" })).toBe(expected);
    expect(cacheFilePath({ HOME: "/home/ada", XDG_CACHE_HOME: "" })).toBe(expected);
    expect(cacheFilePath({ HOME: "/home/ada", XDG_CACHE_HOME: "cache" })).toBe(expected);
  });
});
