import { describe, expect, setDefaultTimeout, test } from "bun:test";
import {
  ModelError,
  modelGone,
  PreflightError,
  prefillRate,
} from "../../../../lib/digest/summarise/models/model-client.ts";
import { errorText } from "../../../../lib/digest/summarise/models/model-http.ts";
import {
  chatComplete,
  chatRequest,
  parseChatAnswer,
  SYSTEM_MESSAGE,
  timingsOf,
} from "../../../../lib/digest/summarise/models/openai/chat.ts";
import { probeMachine } from "../../../../lib/digest/summarise/models/openai/machine.ts";
import { openAiPreflight } from "../../../../lib/digest/summarise/models/openai/preflight.ts";
import { endlessResponse, gate } from "../../../fakes/digest-world.ts";
import { startFakeOllama } from "../../../fakes/ollama.ts";
import { DEFAULT_OPENAI_MODEL, startFakeOpenAi } from "../../../fakes/openai-server.ts";

setDefaultTimeout(20_000);

async function closedPortUrl(): Promise<string> {
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const url = `http://127.0.0.1:${server.port}/v1`;
  server.stop(true);
  return url;
}

async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a failure");
}

const INPUT = {
  model: DEFAULT_OPENAI_MODEL,
  prompt: "Summarise the article below.",
  maxTokens: 512,
};

describe("chatRequest()", () => {
  test("builds a non-streamed chat completion with a system and a user message", () => {
    const { url, init } = chatRequest("http://localhost:8080/v1", INPUT);
    expect(url).toBe("http://localhost:8080/v1/chat/completions");
    expect(init.method).toBe("POST");
    expect(init.headers).toEqual({ "content-type": "application/json" });
    expect(JSON.parse(init.body)).toEqual({
      model: DEFAULT_OPENAI_MODEL,
      messages: [
        { role: "system", content: SYSTEM_MESSAGE },
        { role: "user", content: "Summarise the article below." },
      ],
      stream: false,
      max_tokens: 512,
      temperature: 0.2,
    });
  });

  test("sends a key as a Bearer token, and no Authorization header without one", () => {
    expect(chatRequest("http://x/v1", INPUT, "sk-local").init.headers).toEqual({
      "content-type": "application/json",
      authorization: "Bearer sk-local",
    });
    expect(chatRequest("http://x/v1", INPUT, undefined).init.headers).not.toHaveProperty(
      "authorization",
    );
  });
});

const CALL = { url: "u", wallMs: 1234 };

describe("parseChatAnswer()", () => {
  test("reads the text, why it stopped, usage and llama-server's timings", () => {
    const answer = parseChatAnswer(
      {
        choices: [
          {
            index: 0,
            message: { role: "assistant", content: "<think>hm</think>A sum\u001b[31mmary." },
            finish_reason: "length",
          },
        ],
        usage: { prompt_tokens: 1200, completion_tokens: 512 },
        timings: { prompt_n: 1200, prompt_ms: 50000, predicted_n: 512, predicted_ms: 46545.4 },
      },
      CALL,
    );
    expect(answer).toEqual({
      text: "A summary.",
      doneReason: "length",
      promptTokens: 1200,
      answerTokens: 512,
      timings: { promptMs: 50000, answerMs: 46545.4, loadMs: null, wallMs: 1234 },
    });
    expect(prefillRate(answer)).toBe(24);
  });

  test("has only the wall time and no counts when the server reports none", () => {
    const answer = parseChatAnswer({ choices: [{ message: { content: "Fine." } }] }, CALL);
    expect(answer).toMatchObject({ doneReason: null, promptTokens: null, answerTokens: null });
    expect(answer.timings).toEqual({ promptMs: null, answerMs: null, loadMs: null, wallMs: 1234 });
  });

  test("fails on a body without message text, or an empty answer", () => {
    expect(() => parseChatAnswer({ choices: [] }, CALL)).toThrow("has no message text");
    expect(() => parseChatAnswer({ choices: [{ message: { content: null } }] }, CALL)).toThrow(
      "has no message text",
    );
    expect(() =>
      parseChatAnswer({ choices: [{ message: { content: "<think>x" } }] }, CALL),
    ).toThrow("was empty");
  });
});

describe("timingsOf()", () => {
  test("scales the prefill time to the whole prompt when the server read only its uncached end", () => {
    // 3000 of 4000 prompt tokens came from the server's cache; 1000 were read at 24 tokens/s.
    const timings = timingsOf(
      { prompt_n: 1000, prompt_ms: 41_666.7, predicted_n: 100, predicted_ms: 9090.9 },
      4000,
      60_000,
    );
    expect(timings.promptMs).toBeCloseTo(166_666.8, 1);
    expect(timings.answerMs).toBe(9090.9);
  });

  test("refuses partial or nonsensical figures", () => {
    const none = { promptMs: null, answerMs: null, loadMs: null, wallMs: 5 };
    expect(timingsOf({ prompt_n: 10, prompt_ms: 5 }, 10, 5)).toEqual(none);
    expect(
      timingsOf({ prompt_n: 10, prompt_ms: 0, predicted_n: 1, predicted_ms: 1 }, 10, 5),
    ).toEqual(none);
    expect(
      timingsOf({ prompt_n: -1, prompt_ms: 1, predicted_n: 1, predicted_ms: 1 }, 10, 5),
    ).toEqual(none);
  });
});

describe("errorText()", () => {
  test("reads the error shapes servers send", () => {
    expect(errorText({ error: { message: "Invalid API Key", code: 401 } })).toBe("Invalid API Key");
    expect(errorText({ error: "model 'x' not found" })).toBe("model 'x' not found");
    expect(
      errorText({ object: "error", message: "This model's maximum context length is 4096 tokens" }),
    ).toBe("This model's maximum context length is 4096 tokens");
    expect(errorText({ error: { message: "line one\n\u001b[2Jline two" } })).toBe(
      "line one line two",
    );
    expect(errorText({ choices: [] })).toBeUndefined();
  });
});

describe("chatComplete()", () => {
  test("returns the answer, the prompt tokens, the server's timings and the wall time", async () => {
    using server = startFakeOpenAi({ complete: () => "The article says this." });
    let clock = 1000;
    const answer = await chatComplete(server.url, INPUT, { now: () => (clock += 250) });
    expect(answer.text).toBe("The article says this.");
    expect(answer.doneReason).toBe("stop");
    expect(answer.promptTokens).toBeGreaterThan(0);
    expect(answer.timings.promptMs).toBeCloseTo(((answer.promptTokens ?? 0) / 24) * 1000, 3);
    expect(prefillRate(answer)).toBeCloseTo(24, 6);
    expect(answer.timings.wallMs).toBe(250);
    expect(server.chatCalls[0]?.stream).toBe(false);
  });

  test("sends the key and gets a 401 without it, the key never in the message", async () => {
    using server = startFakeOpenAi({ apiKey: "sk-right-key" });
    const answer = await chatComplete(server.url, INPUT, { apiKey: "sk-right-key" });
    expect(answer.text).toStartWith("Summary of the article");
    expect(server.authorizations).toEqual(["Bearer sk-right-key"]);

    const missing = await failure(chatComplete(server.url, INPUT));
    expect(missing).toBeInstanceOf(ModelError);
    expect(missing.message).toContain("answered HTTP 401: Invalid API Key; set OPENAI_API_KEY");
    expect(modelGone(missing)).toBe(true);

    const wrong = await failure(chatComplete(server.url, INPUT, { apiKey: "sk-wrong-key" }));
    expect(wrong.message).toContain("check OPENAI_API_KEY: the server refused it");
    expect(wrong.message).not.toContain("sk-wrong-key");
  });

  test("never sends the key to another origin a server redirects to", async () => {
    using elsewhere = startFakeOpenAi();
    // The same port under another name is another origin.
    const target = elsewhere.url.replace("127.0.0.1", "localhost");
    using redirecting = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: (request) =>
        Response.redirect(`${target}${new URL(request.url).pathname.replace(/^\/v1/, "")}`, 307),
    });
    await chatComplete(`http://127.0.0.1:${redirecting.port}/v1`, INPUT, {
      apiKey: "sk-only-here",
    });
    expect(elsewhere.chatCalls).toHaveLength(1);
    expect(elsewhere.authorizations).toEqual([""]);
  });

  test("hides a key quoted back where a message is cut to length", async () => {
    const key = `sk-${"k".repeat(40)}`;
    using server = startFakeOpenAi({
      complete: () =>
        Response.json({ error: { message: `${"x".repeat(280)} key: ${key}` } }, { status: 401 }),
    });
    const error = await failure(chatComplete(server.url, INPUT, { apiKey: key }));
    expect(error.message).not.toContain("sk-kkk");
    using models = startFakeOpenAi({
      modelsResponse: () =>
        Response.json({ error: { message: `${"x".repeat(280)} key: ${key}` } }, { status: 401 }),
    });
    const refused = await failure(openAiPreflight(models.url, undefined, { apiKey: key }));
    expect(refused.message).toContain("HTTP 401");
    expect(refused.message).not.toContain("sk-kkk");
  });

  test("hides a key the server quotes back", async () => {
    using server = startFakeOpenAi({
      complete: () =>
        Response.json(
          { error: { message: "Incorrect API key provided: sk-abcdef" } },
          { status: 401 },
        ),
    });
    const error = await failure(chatComplete(server.url, INPUT, { apiKey: "sk-abcdef" }));
    expect(error.message).toContain("Incorrect API key provided: [OPENAI_API_KEY]");
    expect(error.message).not.toContain("sk-abcdef");
  });

  test("names the unknown model and how to choose one, as a model that is gone", async () => {
    using server = startFakeOpenAi();
    const error = await failure(chatComplete(server.url, { ...INPUT, model: "gpt-4o" }));
    expect(error.message).toBe(
      `${server.url}/chat/completions answered HTTP 404: The model \`gpt-4o\` does not exist.; the server has no model gpt-4o: choose one it lists with --model / OPENAI_MODEL`,
    );
    expect((error as ModelError).kind).toBe("missing-model");
    expect((error as ModelError).hint).toContain("--model / OPENAI_MODEL");
    expect(modelGone(error)).toBe(true);
  });

  test("says a prompt is longer than the server's context, and that only this call failed", async () => {
    using server = startFakeOpenAi({ contextTokens: 10 });
    const error = await failure(chatComplete(server.url, { ...INPUT, prompt: "x".repeat(400) }));
    expect(error.message).toContain(
      "answered HTTP 400: the request exceeds the available context size",
    );
    expect(error.message).toContain(
      "longer than the server's context of 10 tokens: lower --num-ctx",
    );
    expect(modelGone(error)).toBe(false);
  });

  test("treats a 5xx and a refused connection as the model gone, a 429 as not", async () => {
    using busy = startFakeOpenAi({
      complete: () => Response.json({ error: { message: "busy" } }, { status: 429 }),
    });
    const busyError = await failure(chatComplete(busy.url, INPUT));
    expect((busyError as ModelError).kind).toBe("busy");
    expect(modelGone(busyError)).toBe(false);
    using broken = startFakeOpenAi({
      complete: () => new Response("upstream down", { status: 502 }),
    });
    const bad = await failure(chatComplete(broken.url, INPUT));
    expect(bad.message).toBe(`${broken.url}/chat/completions answered HTTP 502: upstream down`);
    expect(modelGone(bad)).toBe(true);
    const url = await closedPortUrl();
    const refused = await failure(chatComplete(url, INPUT));
    expect(refused.message).toContain(`(connection refused by ${new URL(url).host})`);
    expect(modelGone(refused)).toBe(true);
  });

  test("fails on a 200 carrying an error, and stops reading an endless answer", async () => {
    using server = startFakeOpenAi({
      complete: () => Response.json({ error: { message: "slot unavailable" } }),
    });
    expect((await failure(chatComplete(server.url, INPUT))).message).toContain(
      "reported an error: slot unavailable",
    );
    using flood = startFakeOpenAi({ complete: () => endlessResponse().response });
    const error = await failure(chatComplete(flood.url, INPUT, { maxBytes: 256 * 1024 }));
    expect(error.message).toContain("is larger than 256 KiB; stopped reading it");
  });

  test("says a call stopped by Ctrl-C was interrupted, not that the server is gone", async () => {
    const arrived = gate();
    using server = startFakeOpenAi({
      complete: () => {
        arrived.open();
        return new Promise<string>(() => {});
      },
    });
    const stop = new AbortController();
    const pending = failure(chatComplete(server.url, INPUT, { signal: stop.signal }));
    await arrived.promise;
    stop.abort();
    const error = await pending;
    expect((error as ModelError).kind).toBe("interrupted");
    expect(modelGone(error)).toBe(false);
  });

  test("gives up on a server that does not answer in time", async () => {
    using server = startFakeOpenAi({ complete: () => new Promise<string>(() => {}) });
    const error = await failure(chatComplete(server.url, INPUT, { timeoutMs: 50 }));
    expect(error.message).toContain("(no answer within 50 ms)");
    expect(modelGone(error)).toBe(false);
  });
});

describe("openAiPreflight()", () => {
  test("takes the first listed model when none is named, and the slot's context from /props", async () => {
    using server = startFakeOpenAi({ models: ["first.gguf", "second.gguf"], contextTokens: 4096 });
    expect(await openAiPreflight(server.url, undefined)).toEqual({
      model: "first.gguf",
      chosen: true,
      contextLength: 4096,
    });
    expect(await openAiPreflight(server.url, "second.gguf")).toMatchObject({
      model: "second.gguf",
      chosen: false,
    });
  });

  test("reads vLLM's max_model_len and matches Ollama's :latest ids", async () => {
    using vllm = startFakeOpenAi({
      props: false,
      modelsResponse: () =>
        Response.json({
          object: "list",
          data: [{ id: "meta-llama/Llama-3.2-3B-Instruct", max_model_len: 16384 }],
        }),
    });
    expect(await openAiPreflight(vllm.url, undefined)).toMatchObject({ contextLength: 16384 });
    using ollamaV1 = startFakeOpenAi({ models: ["llama3.2:latest"], props: false });
    expect(await openAiPreflight(ollamaV1.url, "llama3.2")).toEqual({
      model: "llama3.2:latest",
      chosen: false,
      contextLength: null,
    });
  });

  test("fits prompts to Ollama's default context behind its /v1, where a request cannot set one", async () => {
    // Ollama's own API beside its OpenAI-compatible one, as one Ollama serves both.
    using ollama = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: (request) =>
        new URL(request.url).pathname === "/api/tags"
          ? Response.json({ models: [{ name: "llama3.2:latest", model: "llama3.2:latest" }] })
          : new URL(request.url).pathname === "/v1/models"
            ? Response.json({
                object: "list",
                data: [{ id: "llama3.2:latest", object: "model", owned_by: "library" }],
              })
            : new Response("404 page not found", { status: 404 }),
    });
    const facts = await openAiPreflight(`http://127.0.0.1:${ollama.port}/v1`, "llama3.2");
    expect(facts).toEqual({ model: "llama3.2:latest", chosen: false, contextLength: 4096 });
  });

  test("names the models listed when the named one is missing", async () => {
    using server = startFakeOpenAi({ models: ["a.gguf", "b.gguf"] });
    const error = await failure(openAiPreflight(server.url, "gpt-4o"));
    expect(error).toBeInstanceOf(PreflightError);
    expect(error.message).toBe(
      `${server.url}/models has no model gpt-4o (models: a.gguf, b.gguf). Choose one with --model / OPENAI_MODEL, or leave both unset to take the first.`,
    );
  });

  test("says to set the key on a 401 without one, and to check it with a wrong one", async () => {
    using server = startFakeOpenAi({ apiKey: "sk-right-key" });
    expect((await openAiPreflight(server.url, undefined, { apiKey: "sk-right-key" })).model).toBe(
      DEFAULT_OPENAI_MODEL,
    );
    expect((await failure(openAiPreflight(server.url, undefined))).message).toBe(
      `${server.url}/models answered HTTP 401: Invalid API Key. The server wants a key: set OPENAI_API_KEY.`,
    );
    const wrong = await failure(openAiPreflight(server.url, undefined, { apiKey: "sk-wrong-key" }));
    expect(wrong.message).toContain("The server refused OPENAI_API_KEY");
    expect(wrong.message).not.toContain("sk-wrong-key");
  });

  test("names the URL and how to start a server when nothing answers", async () => {
    const url = await closedPortUrl();
    const error = await failure(openAiPreflight(url, undefined));
    expect(error.message).toStartWith(
      `No OpenAI-compatible server answers at ${url}/models (connection refused by ${new URL(url).host}). Start one`,
    );
    expect(error.message).toContain("point OPENAI_BASE_URL at a running server");
  });

  test("recognises Ollama's own API and says to use --api=ollama or /v1", async () => {
    using ollama = startFakeOllama();
    const error = await failure(openAiPreflight(ollama.url, undefined));
    expect(error.message).toBe(
      `${ollama.url}/models answered HTTP 404. ${ollama.url} is Ollama's own API: use --api=ollama (LLM_API=ollama) with OLLAMA_ENDPOINT_URL=${ollama.url}, or OPENAI_BASE_URL=${ollama.url}/v1.`,
    );
  });

  test("suggests /v1 for a base URL without it", async () => {
    using server = startFakeOpenAi();
    const root = server.url.slice(0, -3);
    const error = await failure(openAiPreflight(root, undefined));
    expect(error.message).toContain(`try OPENAI_BASE_URL=${root}/v1.`);
  });

  test("refuses an empty list, a body that is not a list, and an endless answer", async () => {
    using empty = startFakeOpenAi({ models: [] });
    expect((await failure(openAiPreflight(empty.url, undefined))).message).toContain(
      "lists no models",
    );
    using html = startFakeOpenAi({ modelsResponse: () => new Response("<html>login</html>") });
    expect((await failure(openAiPreflight(html.url, undefined))).message).toContain(
      'did not answer like an OpenAI-compatible server (no "data" list of models)',
    );
    using flood = startFakeOpenAi({ modelsResponse: () => endlessResponse().response });
    expect(
      (await failure(openAiPreflight(flood.url, undefined, { maxBytes: 64 * 1024 }))).message,
    ).toContain("sent an answer larger than 64 KiB");
  });

  test("skips ids with control characters", async () => {
    using server = startFakeOpenAi({ models: ["evil\u001b[2J", "good.gguf"] });
    expect((await openAiPreflight(server.url, undefined)).model).toBe("good.gguf");
  });
});

describe("probeMachine()", () => {
  const CPU = { prefillPerSecond: 24, decodePerSecond: 11 };
  const GPU = { prefillPerSecond: 20_000, decodePerSecond: 200 };

  test("tells a GPU from a CPU by llama-server's timings, counting the probe's time as spent", async () => {
    using gpu = startFakeOpenAi({ machine: GPU });
    const onGpu = await probeMachine(gpu.url, DEFAULT_OPENAI_MODEL, { now: gpu.now });
    expect(onGpu?.placement).toBe("gpu");
    expect(onGpu?.loadMs).toBeCloseTo(gpu.modelledMs, 2);
    using cpu = startFakeOpenAi({ machine: CPU });
    const found = await probeMachine(cpu.url, DEFAULT_OPENAI_MODEL, { now: cpu.now });
    expect(found?.placement).toBe("cpu");
    expect(found?.loadMs).toBeGreaterThan(2000);
    expect(cpu.chatCalls[0]?.max_tokens).toBe(1);
  });

  test("by the call's duration when the server reports no timings", async () => {
    using gpu = startFakeOpenAi({ machine: GPU, timings: false });
    expect((await probeMachine(gpu.url, DEFAULT_OPENAI_MODEL, { now: gpu.now }))?.placement).toBe(
      "gpu",
    );
    using cpu = startFakeOpenAi({ machine: CPU, timings: false });
    expect((await probeMachine(cpu.url, DEFAULT_OPENAI_MODEL, { now: cpu.now }))?.placement).toBe(
      "cpu",
    );
  });

  test("starts each probe differently, so a prompt cache cannot answer it from an earlier run", async () => {
    using server = startFakeOpenAi({ machine: CPU });
    await probeMachine(server.url, DEFAULT_OPENAI_MODEL, { now: server.now });
    await probeMachine(server.url, DEFAULT_OPENAI_MODEL, { now: server.now });
    const [first, second] = server.chatCalls.map((call) => call.messages[1]?.content ?? "");
    expect(first).not.toBe(second);
  });

  test("is null when the probe fails or takes no measurable time, and never throws", async () => {
    using broken = startFakeOpenAi({ complete: () => new Response("down", { status: 503 }) });
    expect(await probeMachine(broken.url, DEFAULT_OPENAI_MODEL, {})).toBeNull();
    using still = startFakeOpenAi({ timings: false });
    expect(await probeMachine(still.url, DEFAULT_OPENAI_MODEL, { now: () => 5 })).toBeNull();
  });
});
