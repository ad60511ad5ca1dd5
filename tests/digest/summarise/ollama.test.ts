import { describe, expect, test } from "bun:test";
import {
  generate,
  generateRequest,
  normaliseModelName,
  OllamaError,
  stripThinking,
} from "../../../lib/digest/summarise/ollama.ts";
import {
  contextLengthOf,
  PreflightError,
  preflight,
  showContextLength,
} from "../../../lib/digest/summarise/ollama-models.ts";
import { endlessResponse } from "../../fakes/digest-world.ts";
import { generateSuccess, startFakeOllama } from "../../fakes/ollama.ts";

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

describe("generate()", () => {
  const request = { model: "llama3.2", prompt: "Summarise: x", numCtx: 4096, numPredict: 512 };

  test("returns the response text and why it stopped", async () => {
    using ollama = startFakeOllama({ generate: () => "  A short summary.  " });
    expect(await generate(ollama.url, request)).toEqual({
      text: "A short summary.",
      doneReason: "stop",
      promptTokens: 28,
    });
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
    await expect(failure).rejects.toBeInstanceOf(OllamaError);
    await expect(failure).rejects.toThrow(
      "Ollama answered HTTP 404: model 'llama3.2' not found; run `ollama pull llama3.2`",
    );
  });

  test("fails on a 200 whose body carries an error", async () => {
    using ollama = startFakeOllama({
      generate: () => Response.json({ error: "an unknown error was encountered" }),
    });
    await expect(generate(ollama.url, request)).rejects.toThrow(
      "Ollama reported an error: an unknown error was encountered",
    );
  });

  test("fails on a 500 with Ollama's error text", async () => {
    using ollama = startFakeOllama({
      generate: () =>
        Response.json({ error: "llama runner process has terminated" }, { status: 500 }),
    });
    await expect(generate(ollama.url, request)).rejects.toThrow(
      "Ollama answered HTTP 500: llama runner process has terminated",
    );
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
    await expect(generate(url, request)).rejects.toThrow(
      `Ollama did not answer at ${url}/api/generate (connection refused by ${new URL(url).host})`,
    );
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
