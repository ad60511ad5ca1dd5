import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { exitCodeFor } from "../../lib/cli/run.ts";
import { ConfigError } from "../../lib/config/errors.ts";
import { ModelGoneError } from "../../lib/digest/digest.ts";
import { PreflightError } from "../../lib/digest/summarise/models/model-client.ts";
import { articleHtml, articleParagraphs } from "../fakes/article-site.ts";
import { runDigestCommand } from "../fakes/digest-run.ts";
import { startDigestWorld } from "../fakes/digest-world.ts";
import { askHnHit, commentHit, storyHit, textPosts } from "../fakes/hn-search.ts";
import { promptKind } from "../fakes/ollama.ts";
import {
  DEFAULT_OPENAI_MODEL,
  echoChatTitle,
  type FakeOpenAi,
  fakeTokens,
} from "../fakes/openai-server.ts";
import { tempDirs } from "../fakes/temp-dirs.ts";

// Four fake servers per test on a machine shared by many test runs.
setDefaultTimeout(30_000);

const tempDir = tempDirs("digest-openai-");

const BODY = articleParagraphs();

function twoStories() {
  const first = storyHit({ title: "A tiny database", url: "/db", points: 300, num_comments: 1 });
  const ask = askHnHit();
  return {
    stories: [first, ask],
    pages: { "/db": { body: articleHtml("A tiny database", BODY) } },
    comments: {
      [Number(first.objectID)]: [commentHit(Number(first.objectID), { comment_text: "Nice." })],
      [Number(ask.objectID)]: [commentHit(Number(ask.objectID), { comment_text: "SICP." })],
    },
  };
}

function openaiOf(world: ReturnType<typeof startDigestWorld>) {
  if (!world.openai) throw new Error("the world has no OpenAI-compatible server");
  return world.openai;
}

/** The summary calls, without the one-token probe of where the model runs. */
function summaryCalls(server: FakeOpenAi) {
  return server.chatCalls.filter((call) => call.max_tokens !== 1);
}

/** `bun run digest <rawArgs>` in-process, with stdout, stderr and the log captured. */
async function digest(
  env: Record<string, string>,
  rawArgs: string[] = [],
  cacheHome: string = tempDir(),
) {
  const run = await runDigestCommand({ XDG_CACHE_HOME: cacheHome, ...env }, rawArgs, {
    at: Date.parse("2026-11-25T14:53:53Z"),
    deps: { timeZone: undefined },
  });
  const everything = [run.stdout, run.stderr, ...run.logger.lines].join("\n");
  return { ...run, everything };
}

describe("bun run digest --api=openai", () => {
  test("summarises through /v1/chat/completions with the first model the server lists", async () => {
    using world = startDigestWorld({
      ...twoStories(),
      openai: { models: ["first.gguf", "b.gguf"] },
    });
    const server = openaiOf(world);
    const { stdout, logger, error } = await digest(world.env);
    expect(error).toBeUndefined();
    expect(stdout).toContain(" · first.gguf · 2 stories");
    expect(stdout).toContain("**Article.** Summary of the article of A tiny database.");
    expect(stdout).toContain(
      "**Discussion.** Summary of the discussion of Ask HN: What are you reading?",
    );
    // One probe of where the model runs, then the four summaries.
    expect(server.chatCalls.map((call) => call.max_tokens)).toEqual([1, 512, 512, 512, 512]);
    for (const call of server.chatCalls) {
      expect(call).toMatchObject({ model: "first.gguf", stream: false, temperature: 0.2 });
      expect(call.messages.map((message) => message.role)).toEqual(["system", "user"]);
    }
    expect(world.ollama.generateCalls).toEqual([]);
    expect(world.ollama.tagsCalls).toBe(0);
    expect(logger.lines).toContain(
      `info Summaries by first.gguf, the first model the OpenAI-compatible server at ${server.url} lists (choose another with --model / OPENAI_MODEL)`,
    );
  });

  test("--model picks a listed model; OLLAMA_MODEL does not", async () => {
    using world = startDigestWorld({ ...twoStories(), openai: { models: ["a.gguf", "b.gguf"] } });
    const { error } = await digest({ ...world.env, OLLAMA_MODEL: "a.gguf" }, ["-m", "b.gguf"]);
    expect(error).toBeUndefined();
    expect(new Set(openaiOf(world).chatCalls.map((call) => call.model))).toEqual(
      new Set(["b.gguf"]),
    );
  });

  test("sends OPENAI_API_KEY as a Bearer token, and never shows it", async () => {
    const key = "sk-local-5f2a9c";
    using world = startDigestWorld({ ...twoStories(), openai: { apiKey: key } });
    const { error } = await digest({ ...world.env, OPENAI_API_KEY: key });
    expect(error).toBeUndefined();
    expect(new Set(openaiOf(world).authorizations)).toEqual(new Set([`Bearer ${key}`]));

    const wrong = await digest({ ...world.env, OPENAI_API_KEY: "sk-wrong-77e1" });
    expect(wrong.error).toBeInstanceOf(PreflightError);
    expect(exitCodeFor(wrong.error)).toBe(1);
    expect((wrong.error as Error).message).toBe(
      `${openaiOf(world).url}/models answered HTTP 401: Invalid API Key. The server refused OPENAI_API_KEY: check the key it was started with (llama-server --api-key).`,
    );
    expect(wrong.everything).not.toContain("sk-wrong-77e1");
  });

  test("a malformed OPENAI_API_KEY exits 2 before any call, without repeating it", async () => {
    using world = startDigestWorld({ ...twoStories(), openai: {} });
    const { error, everything } = await digest({ ...world.env, OPENAI_API_KEY: "sk-one two" });
    expect(error).toBeInstanceOf(ConfigError);
    expect(exitCodeFor(error)).toBe(2);
    expect((error as Error).message).toBe(
      "OPENAI_API_KEY is invalid: expected printable ASCII without spaces",
    );
    expect(everything).not.toContain("sk-one");
    expect(openaiOf(world).authorizations).toEqual([]);
  });

  test("stops before fetching anything without the key the server wants, or with a model it lacks", async () => {
    using world = startDigestWorld({ ...twoStories(), openai: { apiKey: "sk-x-1234" } });
    const missingKey = await digest(world.env);
    expect((missingKey.error as Error).message).toContain(
      "The server wants a key: set OPENAI_API_KEY.",
    );
    const missingModel = await digest({
      ...world.env,
      OPENAI_API_KEY: "sk-x-1234",
      OPENAI_MODEL: "gpt-4o",
    });
    expect(missingModel.error).toBeInstanceOf(PreflightError);
    expect((missingModel.error as Error).message).toContain(
      `has no model gpt-4o (models: ${DEFAULT_OPENAI_MODEL}). Choose one with --model / OPENAI_MODEL`,
    );
    expect(world.search.requests).toEqual([]);
    expect(openaiOf(world).chatCalls).toEqual([]);
  });

  test("fits prompts to llama-server's context per slot, below --num-ctx", async () => {
    const comments = Array.from({ length: 120 }, (_, i) =>
      commentHit(1, { comment_text: `Comment ${i}: ${"words about the database ".repeat(30)}` }),
    );
    const story = storyHit({
      objectID: "1",
      title: "Busy thread",
      url: undefined,
      story_text: "Hi.",
      num_comments: 120,
    });
    using world = startDigestWorld({
      stories: [story],
      comments: { 1: comments },
      openai: { contextTokens: 4096 },
    });
    const { error, stdout, logger } = await digest(world.env, [
      "--num-ctx",
      "16384",
      "--limit",
      "1",
    ]);
    expect(error).toBeUndefined();
    expect(logger.lines).toContain(
      `info ${DEFAULT_OPENAI_MODEL} has a context length of 4096 tokens; using that instead of 16384 (OLLAMA_NUM_CTX / --num-ctx)`,
    );
    expect(stdout).toContain("**Discussion.** Summary of the discussion of Busy thread.");
    const discussion = openaiOf(world).chatCalls.find((call) =>
      call.messages[1]?.content.includes("Comments:"),
    );
    const tokens = fakeTokens(discussion?.messages.map((m) => m.content).join("\n") ?? "");
    expect(tokens).toBeGreaterThan(2000);
    expect(tokens).toBeLessThanOrEqual(4096 - 512);
  });

  test("keeps summaries by API and model apart in the cache", async () => {
    const cacheHome = tempDir();
    using world = startDigestWorld({
      ...twoStories(),
      ollama: { models: ["llama3.2:latest"] },
      openai: { models: ["llama3.2:latest"], props: false },
    });
    const ollamaEnv = { ...world.env, LLM_API: "ollama" };
    expect((await digest(ollamaEnv, [], cacheHome)).error).toBeUndefined();
    expect(world.ollama.generateCalls).toHaveLength(4);

    // The same model name on an OpenAI-compatible server: Ollama's summaries are not reused.
    expect((await digest(world.env, [], cacheHome)).error).toBeUndefined();
    expect(summaryCalls(openaiOf(world))).toHaveLength(4);

    // Each API's own re-run is answered from the cache.
    const again = await digest(world.env, [], cacheHome);
    expect(summaryCalls(openaiOf(world))).toHaveLength(4);
    expect(again.logger.lines.join("\n")).toContain("4 summaries, all from the cache");
    await digest(ollamaEnv, [], cacheHome);
    expect(world.ollama.generateCalls).toHaveLength(4);
  });

  test("notes a prompt the server refused as too long, and goes on", async () => {
    using world = startDigestWorld({
      ...twoStories(),
      openai: {
        props: false,
        complete: (body) =>
          promptKind(body.messages[1]?.content ?? "") === "article"
            ? Response.json(
                {
                  error: {
                    code: 400,
                    message: "the request exceeds the available context size, try increasing it",
                    type: "exceed_context_size_error",
                    n_prompt_tokens: 5000,
                    n_ctx: 2048,
                  },
                },
                { status: 400 },
              )
            : "Fine.",
      },
    });
    const { error, stdout } = await digest(world.env);
    expect(error).toBeUndefined();
    expect(stdout).toContain(
      "the prompt is longer than the server's context of 2048 tokens: lower --num-ctx, or give the server a larger one (llama-server -c)",
    );
    expect(stdout).toContain("**Discussion.** Fine.");
  });
});

describe("bun run digest --api=openai: the server gone", () => {
  const YESTERDAY = "# Yesterday's digest\n\nA good one.";

  function yesterdaysDigest(): string {
    const target = join(tempDir(), "digest.md");
    writeFileSync(target, YESTERDAY);
    return target;
  }

  test("the model unloaded after 4 summaries: 3 calls fail, no more are made, --out untouched, exit 1", async () => {
    using world = startDigestWorld({
      stories: textPosts(10),
      openai: {
        models: ["only.gguf"],
        // Call 1 is the probe of where the model runs.
        complete: (body, call) =>
          call <= 5
            ? echoChatTitle(body)
            : Response.json({ error: { code: 404, message: "model not found" } }, { status: 404 }),
      },
    });
    const target = yesterdaysDigest();
    const { error, stdout, logger } = await digest(world.env, ["--out", target]);
    expect(error).toBeInstanceOf(ModelGoneError);
    expect(exitCodeFor(error)).toBe(1);
    expect(summaryCalls(openaiOf(world))).toHaveLength(7);
    expect(readFileSync(target, "utf8")).toBe(YESTERDAY);
    expect(stdout).toBe("");
    expect(logger.lines.filter((line) => line.includes("summary failed"))).toEqual([]);
    expect((error as Error).message).toBe(
      `Stopped after 3 failed calls in a row: the OpenAI-compatible server at ${openaiOf(world).url} cannot answer (${openaiOf(world).url}/chat/completions answered HTTP 404: model not found; the server has no model only.gguf). Choose a model the server lists with --model / OPENAI_MODEL, or leave both unset to take the first. ${target} was left as it was.`,
    );
  });

  test("the server stopped after 4 summaries: connection refused three times, exit 1", async () => {
    using world = startDigestWorld({ stories: textPosts(10), openai: { stopAfter: 5 } });
    const target = yesterdaysDigest();
    const { error } = await digest(world.env, ["--out", target]);
    expect(error).toBeInstanceOf(ModelGoneError);
    expect(summaryCalls(openaiOf(world))).toHaveLength(4);
    expect(readFileSync(target, "utf8")).toBe(YESTERDAY);
    expect((error as Error).message).toContain(
      `cannot answer (No answer from ${openaiOf(world).url}/chat/completions (connection refused by`,
    );
    expect((error as Error).message).toContain(
      "Start the server again, or point OPENAI_BASE_URL / --openai-url at a running one.",
    );
  });

  test("the key refused from the 3rd summary on: stops, and the key is never shown", async () => {
    const key = "sk-rotated-9d41";
    using world = startDigestWorld({
      stories: textPosts(10),
      openai: {
        complete: (body, call) =>
          call <= 3
            ? echoChatTitle(body)
            : Response.json(
                { error: { message: `Incorrect API key provided: ${key}` } },
                { status: 401 },
              ),
      },
    });
    const { error, everything } = await digest({ ...world.env, OPENAI_API_KEY: key });
    expect(error).toBeInstanceOf(ModelGoneError);
    expect(summaryCalls(openaiOf(world))).toHaveLength(5);
    expect((error as Error).message).toContain(
      "answered HTTP 401: Incorrect API key provided: [OPENAI_API_KEY]). Check OPENAI_API_KEY: the server refused it.",
    );
    expect(`${everything}\n${(error as Error).message}`).not.toContain(key);
  });
});
