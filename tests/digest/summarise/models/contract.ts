/**
 * What every ModelClient promises, whatever its API: one suite, run against each API's fake
 * server (contract.test.ts). A new API in lib/digest/summarise/models/ adds its harness there.
 */
import { describe, expect, test } from "bun:test";
import { type Api, MODEL_APIS } from "../../../../lib/digest/summarise/models/apis.ts";
import {
  type ModelClient,
  ModelError,
  modelGone,
  PreflightError,
} from "../../../../lib/digest/summarise/models/model-client.ts";
import { openModelClient } from "../../../../lib/digest/summarise/models/open-model.ts";
import { gate } from "../../../fakes/digest-world.ts";

/** A fake server of one API, answering each prompt with `answer`. */
export interface FakeModelServer {
  url: string;
  /** Every request it was sent, as `METHOD /path`. */
  requests: string[];
  /** The model it lists. */
  model: string;
  [Symbol.dispose](): void;
}

export interface ContractHarness {
  api: Api;
  start(
    answer: (prompt: string) => string | Response | Promise<string | Response>,
  ): FakeModelServer;
}

const REQUEST = {
  prompt: "Title: Ask HN\n\nSummarise the discussion.",
  numCtx: 4096,
  numPredict: 64,
};

function open(api: Api, url: string, model: string | undefined): ModelClient {
  return MODEL_APIS[api].open(
    { url, model, apiKey: undefined, timeoutMs: undefined },
    { checkTimeoutMs: 5_000 },
  );
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a failure");
}

async function closedPortUrl(api: Api): Promise<string> {
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const base = `http://127.0.0.1:${server.port}`;
  server.stop(true);
  return api === "openai" ? `${base}/v1` : base;
}

export function modelClientContract(harness: ContractHarness): void {
  const { api } = harness;
  describe(`ModelClient contract: ${api}`, () => {
    test("preflight() names the model the answers come from, and a context length or null", async () => {
      using server = harness.start(() => "An answer.");
      const info = await open(api, server.url, server.model).preflight();
      expect(info.model).toBe(server.model);
      expect(info.contextLength === null || info.contextLength > 0).toBe(true);
    });

    test("preflight() refuses a model the server does not have, naming it", async () => {
      using server = harness.start(() => "An answer.");
      const error = await failure(open(api, server.url, "no-such-model").preflight());
      expect(error).toBeInstanceOf(PreflightError);
      expect((error as Error).message).toContain("no-such-model");
    });

    test("preflight() with nothing listening says where it looked", async () => {
      const url = await closedPortUrl(api);
      const error = await failure(open(api, url, "m").preflight());
      expect(error).toBeInstanceOf(PreflightError);
      expect((error as Error).message).toContain(new URL(url).host);
    });

    test("describe names the server by its URL", async () => {
      using server = harness.start(() => "An answer.");
      expect(open(api, server.url, server.model).describe).toContain(server.url);
    });

    test("generate() gives the answer cleaned, with its token counts and wall time", async () => {
      using server = harness.start(
        () => "<think>hmm</think>It is about \u001b[31mparsers\u001b[0m.",
      );
      const client = open(api, server.url, server.model);
      await client.preflight();
      const answer = await client.generate(REQUEST, { timeoutMs: 10_000 });
      expect(answer.text).toBe("It is about parsers.");
      expect(answer.promptTokens).toBeGreaterThan(0);
      expect(answer.answerTokens).toBeGreaterThan(0);
      expect(answer.doneReason).toBe("stop");
      expect(answer.timings.wallMs).toBeGreaterThanOrEqual(0);
    });

    test("generate() on a 5xx fails as a server that cannot answer", async () => {
      using server = harness.start(() =>
        Response.json({ error: { message: "out of memory" } }, { status: 500 }),
      );
      const client = open(api, server.url, server.model);
      await client.preflight();
      const error = await failure(client.generate(REQUEST, { timeoutMs: 10_000 }));
      expect(error).toBeInstanceOf(ModelError);
      expect((error as ModelError).kind).toBe("server");
      expect(modelGone(error)).toBe(true);
    });

    test("generate() with nothing listening fails as unreachable, the model gone", async () => {
      const error = await failure(
        open(api, await closedPortUrl(api), "m").generate(REQUEST, { timeoutMs: 10_000 }),
      );
      expect((error as ModelError).kind).toBe("unreachable");
      expect(modelGone(error)).toBe(true);
    });

    test("generate() tells its timeout from Ctrl-C; neither means the model is gone", async () => {
      const hang = gate<string>();
      using server = harness.start(() => hang.promise);
      const client = open(api, server.url, server.model);
      await client.preflight();
      const timedOut = await failure(client.generate(REQUEST, { timeoutMs: 50 }));
      expect((timedOut as ModelError).kind).toBe("timeout");
      const stop = new AbortController();
      const call = failure(client.generate(REQUEST, { timeoutMs: 10_000, signal: stop.signal }));
      stop.abort();
      const stopped = await call;
      expect((stopped as ModelError).kind).toBe("interrupted");
      expect(modelGone(timedOut) || modelGone(stopped)).toBe(false);
      hang.open("late");
    });

    test("a URL's user:password@ reaches the server, never a message", async () => {
      using server = harness.start(() => "An answer.");
      const withCredentials = (url: string) => url.replace("http://", "http://digest:s3cret@");
      const open = (url: string) =>
        openModelClient({
          api,
          server: {
            url: withCredentials(url),
            model: server.model,
            apiKey: undefined,
            timeoutMs: undefined,
          },
        });
      const working = open(server.url);
      expect(working.describe).toBe(open(server.url).describe);
      expect(working.describe).not.toContain("s3cret");
      expect(working.describe).toContain(new URL(server.url).host);
      await working.preflight();
      const refused = open(await closedPortUrl(api));
      const failures = [
        await failure(refused.preflight()),
        await failure(refused.generate(REQUEST, { timeoutMs: 10_000 })),
      ];
      for (const error of failures) {
        expect(String((error as Error).message)).not.toContain("s3cret");
        expect(String((error as ModelError).hint ?? "")).not.toContain("s3cret");
        expect(String((error as ModelError).reason ?? "")).not.toContain("s3cret");
        expect((error as Error).message).not.toContain("digest:");
      }
      expect(failures[0]).toBeInstanceOf(PreflightError);
      expect((failures[1] as ModelError).kind).toBe("unreachable");
    });

    test("machine(), when the API has it, says where the model runs or null", async () => {
      using server = harness.start(() => "A");
      const client = open(api, server.url, server.model);
      await client.preflight();
      const machine = await client.machine?.({ numCtx: 4096 });
      if (machine === undefined || machine === null) return;
      expect(["gpu", "partial", "cpu"]).toContain(machine.placement);
    });
  });
}
