import { describe, expect, test } from "bun:test";
import { createModelHealth, goneMessage } from "../../../lib/digest/summarise/model-health.ts";
import { ModelError } from "../../../lib/digest/summarise/models/model-client.ts";

const refused = () => new ModelError("connection refused", "unreachable", "Start Ollama.");

describe("createModelHealth()", () => {
  test("takes the model for gone after three such failures in a row, and aborts its signal", () => {
    const health = createModelHealth();
    const warned: string[] = [];
    for (let i = 1; i <= 3; i++) health.failed(refused(), () => warned.push(`call ${i}`));
    expect(health.gone?.kind).toBe("unreachable");
    expect(health.signal.aborted).toBe(true);
    health.flush();
    expect(warned).toEqual([]);
  });

  test("an answer in between makes them one-offs: their warnings are shown then", () => {
    const health = createModelHealth();
    const warned: string[] = [];
    health.failed(refused(), () => warned.push("first"));
    health.failed(new ModelError("missing", "missing-model"), () => warned.push("second"));
    expect(warned).toEqual([]);
    health.answered();
    expect(warned).toEqual(["first", "second"]);
    health.failed(refused(), () => warned.push("third"));
    expect(health.gone).toBeNull();
    health.flush();
    expect(warned).toEqual(["first", "second", "third"]);
  });

  test("a failure of one call only (a timeout, a bad answer) is warned at once and counts for nothing", () => {
    const health = createModelHealth();
    const warned: string[] = [];
    health.failed(refused(), () => warned.push("refused"));
    health.failed(new ModelError("late", "timeout"), () => warned.push("timeout"));
    health.failed(refused(), () => warned.push("refused again"));
    expect(warned).toEqual(["timeout"]);
    expect(health.gone).toBeNull();
    health.failed(new ModelError("HTTP 503", "server"), () => {});
    expect(health.gone?.kind).toBe("server");
  });

  test("goneMessage() says what happened, the fix, and that --out was left alone, on one line", () => {
    const gone = new ModelError("Ollama answered HTTP 500: boom", "server", "Restart Ollama.");
    expect(goneMessage(gone, { describe: "Ollama at http://x:1", out: "d.md" })).toBe(
      "Stopped after 3 failed calls in a row: Ollama at http://x:1 cannot answer (Ollama answered HTTP 500: boom). Restart Ollama. d.md was left as it was.",
    );
  });

  test("goneMessage() says the fix once when the error's message ends with it too", () => {
    const gone = new ModelError(
      "HTTP 404: no model m; run `pull m`",
      "missing-model",
      "Run `pull m`, or choose another.",
      "HTTP 404: no model m",
    );
    expect(goneMessage(gone, { describe: "S", out: undefined })).toBe(
      "Stopped after 3 failed calls in a row: S cannot answer (HTTP 404: no model m). Run `pull m`, or choose another.",
    );
  });
});
