import { describe, expect, test } from "bun:test";
import {
  decodeRate,
  ModelError,
  modelGone,
  normaliseModelName,
  PreflightError,
  prefillRate,
} from "../../../../lib/digest/summarise/models/model-client.ts";
import { stripThinking } from "../../../../lib/digest/summarise/models/model-http.ts";
import { createOllamaClient } from "../../../../lib/digest/summarise/models/ollama/client.ts";
import {
  generate,
  generateRequest,
} from "../../../../lib/digest/summarise/models/ollama/generate.ts";
import {
  contextLengthOf,
  preflight,
  showContextLength,
} from "../../../../lib/digest/summarise/models/ollama/preflight.ts";
import { endlessResponse, gate } from "../../../fakes/digest-world.ts";
import { generateSuccess, startFakeOllama } from "../../../fakes/ollama.ts";
import { startFakeOpenAi } from "../../../fakes/openai-server.ts";

async function closedPortUrl(): Promise<string> {
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const url = `http://127.0.0.1:${server.port}`;
  server.stop(true);
  return url;
}

describe("normaliseModelName()", () => {
  test("adds :latest to a name without a tag", () => {
    expect(normaliseModelName("llama3.2")).toBe("llama3.2:latest");
    expect(normaliseModelName("qwen2.5:7b")).toBe("qwen2.5:7b");
    expect(normaliseModelName("registry.local:5000/team/model")).toBe(
      "registry.local:5000/team/model:latest",
    );
  });
});

describe("generateRequest()", () => {
  test("builds a non-streaming request that always names the window and the answer limit", () => {
    const { url, init } = generateRequest("http://localhost:11434", {
      model: "llama3.2",
      prompt: "Hi",
      numCtx: 8192,
      numPredict: 512,
    });
    expect(url).toBe("http://localhost:11434/api/generate");
    expect(init.method).toBe("POST");
    expect(init.headers).toEqual({ "content-type": "application/json" });
    expect(JSON.parse(init.body)).toEqual({
      model: "llama3.2",
      prompt: "Hi",
      stream: false,
      options: { num_ctx: 8192, num_predict: 512 },
    });
  });
});

describe("stripThinking()", () => {
  test("removes <think> blocks", () => {
    expect(stripThinking("<think>\nLet me see...\n</think>\n\nThe answer.")).toBe("The answer.");
    expect(stripThinking("A<think>x</think>B<THINK>y</THINK>C")).toBe("ABC");
  });

  test("treats an unterminated block as no answer", () => {
    expect(stripThinking("<think>still thinking when cut off")).toBe("");
  });
});

describe("preflight()", () => {
  test("passes when the model is installed, with or without its tag", async () => {
    using ollama = startFakeOllama({ models: ["llama3.2:latest", "qwen2.5:7b"] });
    expect(await preflight(ollama.url, "llama3.2")).toEqual({ contextLength: 131072 });
    await preflight(ollama.url, "llama3.2:latest");
    await preflight(ollama.url, "qwen2.5:7b");
    expect(ollama.tagsCalls).toBe(3);
  });

  test("names the model and `ollama pull` when the model is missing", async () => {
    using ollama = startFakeOllama({ models: ["mistral:latest"] });
    const failure = preflight(ollama.url, "llama3.2");
    await expect(failure).rejects.toBeInstanceOf(PreflightError);
    await expect(failure).rejects.toThrow(
      `Ollama at ${ollama.url}/api/tags has no model llama3.2:latest (installed: mistral:latest). Run \`ollama pull llama3.2\``,
    );
  });

  test("names the URL tried and `ollama serve` when Ollama is unreachable", async () => {
    const url = await closedPortUrl();
    const failure = preflight(url, "llama3.2");
    await expect(failure).rejects.toBeInstanceOf(PreflightError);
    await expect(failure).rejects.toThrow(`Ollama does not answer at ${url}/api/tags`);
    await expect(failure).rejects.toThrow(`(connection refused by ${new URL(url).host})`);
    await expect(failure).rejects.toThrow("Start it with `ollama serve`");
    await expect(failure).rejects.toThrow("`ollama pull llama3.2`");
  });

  test("stops reading an endless /api/tags answer", async () => {
    using ollama = startFakeOllama({ tags: () => endlessResponse().response });
    const failure = preflight(ollama.url, "llama3.2");
    await expect(failure).rejects.toBeInstanceOf(PreflightError);
    await expect(failure).rejects.toThrow(
      `${ollama.url}/api/tags sent an answer larger than 8 MiB, not like Ollama.`,
    );
  });

  test("reports a 500 from /api/tags with Ollama's error text", async () => {
    using ollama = startFakeOllama({
      tags: () => Response.json({ error: "out of memory" }, { status: 500 }),
    });
    await expect(preflight(ollama.url, "llama3.2")).rejects.toThrow(
      `Ollama at ${ollama.url}/api/tags answered HTTP 500: out of memory.`,
    );
  });

  test("reports a server that is not Ollama", async () => {
    using ollama = startFakeOllama({ tags: () => new Response("<html>router login</html>") });
    await expect(preflight(ollama.url, "llama3.2")).rejects.toThrow('no "models" list');
  });

  test("says to use --api=openai when the URL is an OpenAI-compatible server", async () => {
    using server = startFakeOpenAi();
    const root = server.url.slice(0, -"/v1".length);
    await expect(preflight(root, "llama3.2")).rejects.toThrow(
      `Ollama at ${root}/api/tags answered HTTP 404: File Not Found. It is an OpenAI-compatible server (it answers ${server.url}/models), not Ollama: use --api=openai (LLM_API=openai) with OPENAI_BASE_URL=${server.url}.`,
    );
    // Given with its /v1, and wanting a key: the same advice.
    using locked = startFakeOpenAi({ apiKey: "sk-1234" });
    await expect(preflight(locked.url, "llama3.2")).rejects.toThrow(
      `use --api=openai (LLM_API=openai) with OPENAI_BASE_URL=${locked.url}.`,
    );
  });
});

describe("showContextLength()", () => {
  test("reads the model's context length from /api/show", async () => {
    using ollama = startFakeOllama({ contextLength: 32768 });
    expect(await showContextLength(ollama.url, "llama3.2")).toBe(32768);
    expect(ollama.showCalls).toEqual(["llama3.2"]);
  });

  test("is null when /api/show fails or does not report a length", async () => {
    using old = startFakeOllama({
      show: () => new Response("404 page not found", { status: 404 }),
    });
    expect(await showContextLength(old.url, "llama3.2")).toBeNull();
    using silent = startFakeOllama({ contextLength: null });
    expect(await showContextLength(silent.url, "llama3.2")).toBeNull();
    using endless = startFakeOllama({ show: () => endlessResponse().response });
    expect(await showContextLength(endless.url, "llama3.2")).toBeNull();
  });

  test("contextLengthOf() takes the architecture's field, or any *.context_length", () => {
    expect(
      contextLengthOf({
        model_info: { "general.architecture": "qwen2", "qwen2.context_length": 32768 },
      }),
    ).toBe(32768);
    expect(contextLengthOf({ model_info: { "gemma3.context_length": 131072 } })).toBe(131072);
    expect(contextLengthOf({ model_info: { "llama.context_length": "lots" } })).toBeNull();
    expect(contextLengthOf({})).toBeNull();
  });
});

async function kindOf(call: Promise<unknown>): Promise<string | undefined> {
  const error = await call.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  return error instanceof ModelError ? `${error.kind}` : undefined;
}

describe("modelGone()", () => {
  test("is true for a server or model that is not there, false for one call's failure", () => {
    for (const kind of ["unreachable", "missing-model", "server"] as const) {
      expect(modelGone(new ModelError("x", kind))).toBe(true);
    }
    for (const kind of ["timeout", "interrupted", "busy", "rejected", "bad-answer"] as const) {
      expect(modelGone(new ModelError("x", kind))).toBe(false);
    }
    expect(modelGone(new Error("x"))).toBe(false);
  });
});

describe("generate()", () => {
  const request = { model: "llama3.2", prompt: "Summarise: x", numCtx: 4096, numPredict: 512 };

  test("returns the response text, why it stopped, and the counts and durations Ollama reports", async () => {
    using ollama = startFakeOllama({ generate: () => "  A short summary.  " });
    let clock = 1000;
    const answer = await generate(ollama.url, request, { now: () => (clock += 250) });
    expect(answer).toEqual({
      text: "A short summary.",
      doneReason: "stop",
      promptTokens: 28,
      answerTokens: 25,
      timings: { promptMs: 138.6102, answerMs: 749.8573, loadMs: 2175.7011, wallMs: 250 },
    });
    expect(prefillRate(answer)).toBeCloseTo(202.01, 1);
    expect(decodeRate(answer)).toBeCloseTo(33.34, 1);
    expect(ollama.generateCalls).toEqual([
      {
        model: "llama3.2",
        prompt: "Summarise: x",
        stream: false,
        options: { num_ctx: 4096, num_predict: 512 },
      },
    ]);
  });

  test("says when the answer stopped at num_predict", async () => {
    using ollama = startFakeOllama({
      generate: (body) =>
        Response.json({ ...generateSuccess(body.model, "Cut off mid"), done_reason: "length" }),
    });
    expect((await generate(ollama.url, request)).doneReason).toBe("length");
  });

  test("strips <think> blocks and control characters from the answer", async () => {
    using ollama = startFakeOllama({
      generate: () => "<think>reasoning\u001b[2J</think>The \u001b[31msummary\u001b[0m.",
    });
    expect((await generate(ollama.url, request)).text).toBe("The summary.");
  });

  test("fails on a 404 for a missing model and says to pull it", async () => {
    using ollama = startFakeOllama({ models: ["mistral:latest"] });
    const failure = generate(ollama.url, request);
    await expect(failure).rejects.toBeInstanceOf(ModelError);
    await expect(failure).rejects.toThrow(
      "Ollama answered HTTP 404: model 'llama3.2' not found; run `ollama pull llama3.2`",
    );
    expect(await kindOf(failure)).toBe("missing-model");
  });

  test.each([
    [
      "a 200 whose body carries an error",
      () => Response.json({ error: "an unknown error was encountered" }),
      "Ollama reported an error: an unknown error was encountered",
      "bad-answer",
    ],
    [
      "a 500 with Ollama's error text",
      () => Response.json({ error: "llama runner process has terminated" }, { status: 500 }),
      "Ollama answered HTTP 500: llama runner process has terminated",
      "server",
    ],
  ])("fails on %s", async (_, answer, message, kind) => {
    using ollama = startFakeOllama({ generate: answer });
    const failure = generate(ollama.url, request);
    await expect(failure).rejects.toThrow(message);
    expect(await kindOf(failure)).toBe(kind);
  });

  test("fails on a 503 whose body is not JSON", async () => {
    using ollama = startFakeOllama({
      generate: () => new Response("server busy", { status: 503 }),
    });
    await expect(generate(ollama.url, request)).rejects.toThrow(
      "Ollama answered HTTP 503: server busy",
    );
  });

  test("fails when Ollama is unreachable", async () => {
    const url = await closedPortUrl();
    const failure = generate(url, request);
    await expect(failure).rejects.toThrow(
      `Ollama did not answer at ${url}/api/generate (connection refused by ${new URL(url).host})`,
    );
    expect(await kindOf(failure)).toBe("unreachable");
  });

  test("a timeout and Ctrl-C are failures of this call only, told apart", async () => {
    const hang = gate<string>();
    using ollama = startFakeOllama({ generate: () => hang.promise });
    const timedOut = generate(ollama.url, request, { timeoutMs: 50 });
    expect(await kindOf(timedOut)).toBe("timeout");
    const stop = new AbortController();
    const stopped = generate(ollama.url, request, { signal: stop.signal });
    stop.abort();
    expect(await kindOf(stopped)).toBe("interrupted");
    hang.open("late");
  });

  test("fails on a success body without response text, or an empty answer", async () => {
    using noText = startFakeOllama({ generate: () => Response.json({ done: true }) });
    await expect(generate(noText.url, request)).rejects.toThrow("no response text");
    using onlyThinking = startFakeOllama({ generate: () => "<think>hmm</think>" });
    await expect(generate(onlyThinking.url, request)).rejects.toThrow("answer was empty");
  });

  test("accepts the real success body shape", async () => {
    using ollama = startFakeOllama({
      generate: (body) => Response.json(generateSuccess(body.model, "A rabbit is ...")),
    });
    expect((await generate(ollama.url, request)).text).toBe("A rabbit is ...");
  });
});

describe("createOllamaClient()", () => {
  test("loads a model that is not loaded, with the run's window, then reads /api/ps", async () => {
    using ollama = startFakeOllama({ placement: "cpu" });
    const client = createOllamaClient({ url: ollama.url, model: "llama3.2" });
    expect(await client.machine?.({ numCtx: 8192 })).toEqual({ placement: "cpu", loadMs: 3000 });
    expect(ollama.loadCalls).toEqual([
      { model: "llama3.2", prompt: "", stream: false, options: { num_ctx: 8192 } },
    ]);
    expect(ollama.generateCalls).toEqual([]);
  });

  test("tells a model all in VRAM from one partly on the CPU, without loading a loaded one", async () => {
    using gpu = startFakeOllama({ placement: "gpu", loaded: true });
    const onGpu = createOllamaClient({ url: gpu.url, model: "llama3.2:latest" });
    expect(await onGpu.machine?.({ numCtx: 8192 })).toEqual({ placement: "gpu", loadMs: null });
    expect(gpu.loadCalls).toEqual([]);
    using partial = startFakeOllama({ placement: "partial", loaded: true });
    const split = createOllamaClient({ url: partial.url, model: "llama3.2" });
    expect((await split.machine?.({ numCtx: 8192 }))?.placement).toBe("partial");
  });

  test("is null when Ollama has no /api/ps (an old version)", async () => {
    using ollama = startFakeOllama({ placement: null });
    const client = createOllamaClient({ url: ollama.url, model: "llama3.2" });
    expect(await client.machine?.({ numCtx: 8192 })).toBeNull();
  });

  test("generate() sends the client's model and passes the call's timeout", async () => {
    const hang = gate<string>();
    using ollama = startFakeOllama({ models: ["qwen2.5:7b"], generate: () => hang.promise });
    const client = createOllamaClient({ url: ollama.url, model: "qwen2.5:7b", fetch });
    const call = client.generate({ prompt: "P", numCtx: 4096, numPredict: 100 }, { timeoutMs: 50 });
    expect(await kindOf(call)).toBe("timeout");
    expect(ollama.generateCalls.map((c) => c.model)).toEqual(["qwen2.5:7b"]);
    hang.open("late");
  });
});

describe("the fake Ollama's modelled machine", () => {
  test("reports the counts and durations of its rates and moves its clock by them, without waiting", async () => {
    using ollama = startFakeOllama({
      machine: { prefillPerSecond: 24, decodePerSecond: 11, answerTokens: 110, loadMs: 5000 },
    });
    const request = { model: "llama3.2", prompt: "x".repeat(4800), numCtx: 8192, numPredict: 512 };
    const started = ollama.now();
    const first = await generate(ollama.url, request);
    expect(first.promptTokens).toBe(1200);
    expect(prefillRate(first)).toBeCloseTo(24, 6);
    expect(decodeRate(first)).toBeCloseTo(11, 6);
    expect(first.timings.loadMs).toBe(5000);
    const second = await generate(ollama.url, request);
    expect(second.timings.loadMs).toBe(0);
    expect(ollama.now() - started).toBeCloseTo(5000 + 2 * (50_000 + 10_000), 3);
  });
});
