import { describe, expect, test } from "bun:test";
import {
  generate,
  generateRequest,
  normaliseModelName,
  OllamaError,
  PreflightError,
  preflight,
  stripThinking,
} from "../../lib/digest/ollama.ts";
import { endlessResponse } from "../fakes/digest-world.ts";
import { generateSuccess, startFakeOllama } from "../fakes/ollama.ts";

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
  test("builds exactly the documented non-streaming request", () => {
    const { url, init } = generateRequest("http://localhost:11434", {
      model: "llama3.2",
      prompt: "Hi",
    });
    expect(url).toBe("http://localhost:11434/api/generate");
    expect(init.method).toBe("POST");
    expect(init.headers).toEqual({ "content-type": "application/json" });
    expect(JSON.parse(init.body)).toEqual({ model: "llama3.2", prompt: "Hi", stream: false });
  });

  test("sends num_ctx in options only when given", () => {
    const { init } = generateRequest("http://h", { model: "m", prompt: "p", numCtx: 8192 });
    expect(JSON.parse(init.body)).toEqual({
      model: "m",
      prompt: "p",
      stream: false,
      options: { num_ctx: 8192 },
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
    await preflight(ollama.url, "llama3.2");
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

describe("generate()", () => {
  const request = { model: "llama3.2", prompt: "Summarise: x" };

  test("returns the response text", async () => {
    using ollama = startFakeOllama({ generate: () => "  A short summary.  " });
    expect(await generate(ollama.url, request)).toBe("A short summary.");
    expect(ollama.generateCalls).toEqual([{ ...request, stream: false }]);
  });

  test("strips <think> blocks and control characters from the answer", async () => {
    using ollama = startFakeOllama({
      generate: () => "<think>reasoning\u001b[2J</think>The \u001b[31msummary\u001b[0m.",
    });
    expect(await generate(ollama.url, request)).toBe("The [31msummary[0m.");
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
      `Ollama did not answer at ${url}/api/generate`,
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
    expect(await generate(ollama.url, request)).toBe("A rabbit is ...");
  });
});
