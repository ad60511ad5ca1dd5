/**
 * The three services the digest talks to, started together for end-to-end tests and the
 * benchmark: a fake search API, a fake article site and a fake Ollama, all on 127.0.0.1; with
 * `openai`, also a fake OpenAI-compatible server, which the env then points the digest at.
 */
import { type Page, startFakeArticleSite } from "./article-site.ts";
import { type FakeHnSearchOptions, type Hit, startFakeHnSearch } from "./hn-search.ts";
import { type FakeOllamaOptions, startFakeOllama } from "./ollama.ts";
import { type FakeOpenAi, type FakeOpenAiOptions, startFakeOpenAi } from "./openai-server.ts";

export interface DigestWorldOptions {
  /** Story hits; a `url` starting with "/" is served by the fake article site. */
  stories: unknown[];
  comments?: Record<number, Hit[]>;
  pages?: Record<string, Page>;
  ollama?: FakeOllamaOptions;
  /** Starts a fake OpenAI-compatible server too, and sets LLM_API=openai. */
  openai?: FakeOpenAiOptions;
  searchLatencyMs?: number;
  articleLatencyMs?: number;
  intercept?: FakeHnSearchOptions["intercept"];
  onArticleRequest?: (path: string) => void;
}

export function startDigestWorld(options: DigestWorldOptions) {
  const site = startFakeArticleSite(options.pages ?? {}, {
    latencyMs: options.articleLatencyMs,
    onRequest: options.onArticleRequest,
  });
  const stories = options.stories.map((hit) => {
    if (hit && typeof hit === "object" && "url" in hit) {
      const url = (hit as Hit).url;
      if (typeof url === "string" && url.startsWith("/"))
        return { ...hit, url: `${site.url}${url}` };
    }
    return hit;
  });
  const search = startFakeHnSearch({
    stories,
    comments: options.comments,
    latencyMs: options.searchLatencyMs,
    intercept: options.intercept,
  });
  const ollama = startFakeOllama(options.ollama);
  const openai: FakeOpenAi | undefined = options.openai
    ? startFakeOpenAi(options.openai)
    : undefined;
  const stop = () => {
    search.stop();
    site.stop();
    ollama.stop();
    openai?.stop();
  };
  return {
    search,
    site,
    ollama,
    openai,
    /** Env pointing the digest at the fakes. */
    env: {
      HN_SEARCH_URL: search.url,
      OLLAMA_ENDPOINT_URL: ollama.url,
      ...(openai ? { LLM_API: "openai", OPENAI_BASE_URL: openai.url } : {}),
      // The fake article site is on loopback, which the digest refuses unless allowed.
      DIGEST_ALLOWED_HOSTS: `127.0.0.1:${new URL(site.url).port}`,
      HOME: "/nonexistent",
    },
    stop,
    [Symbol.dispose]: stop,
  };
}

/** A promise the test opens by hand, to hold a fake's answer until something has happened. */
export function gate<T = void>() {
  let open!: (value: T) => void;
  let opened = false;
  const promise = new Promise<T>((resolve) => {
    open = (value: T) => {
      opened = true;
      resolve(value);
    };
  });
  return {
    promise,
    open: (value: T) => open(value),
    get opened() {
      return opened;
    },
  };
}

/**
 * A 200 whose body never ends (64 KiB chunks for as long as anyone reads), as a broken proxy or a
 * hostile server sends. `cancelled` turns true when the reader gives up.
 */
export function endlessResponse(contentType = "application/json") {
  const chunk = new TextEncoder().encode(`[${"1,".repeat(32 * 1024 - 1)}`);
  const state = { cancelled: false, bytesSent: 0 };
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      controller.enqueue(chunk);
      state.bytesSent += chunk.byteLength;
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { response: new Response(body, { headers: { "content-type": contentType } }), state };
}
