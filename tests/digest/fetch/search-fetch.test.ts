import { describe, expect, test } from "bun:test";
import {
  DEFAULT_RETRY_POLICY,
  fetchSearchJson,
  RETRY_STATUSES,
  retryDecision,
  SearchApiError,
} from "../../../lib/digest/fetch/search-fetch.ts";

const policy = { ...DEFAULT_RETRY_POLICY, jitter: 0 };

/** A test server whose answers come from a list, one per request; the last one repeats. */
function serveSequence(answers: (() => Response)[]) {
  let count = 0;
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch() {
      const answer = answers[Math.min(count, answers.length - 1)];
      count++;
      return answer ? answer() : new Response("no answer", { status: 500 });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/search`,
    get count() {
      return count;
    },
    [Symbol.dispose]: () => server.stop(true),
  };
}

function recordingSleep() {
  const waits: number[] = [];
  return { waits, sleep: async (ms: number) => void waits.push(ms) };
}

describe("retryDecision()", () => {
  test("retries 429 and 5xx, not other 4xx", () => {
    expect([...RETRY_STATUSES].sort()).toEqual([408, 429, 500, 502, 503, 504]);
    const now = 0;
    expect(retryDecision(1, { status: 429 }, { policy, now }).retry).toBe(true);
    expect(retryDecision(1, { status: 503 }, { policy, now }).retry).toBe(true);
    expect(retryDecision(1, {}, { policy, now }).retry).toBe(true);
    expect(retryDecision(1, { status: 404 }, { policy, now })).toEqual({
      retry: false,
      reason: "HTTP 404 is not retried",
    });
  });

  test("doubles the delay on each retry", () => {
    const delays = [1, 2, 3, 4].map((retry) => retryDecision(retry, {}, { policy, now: 0 }));
    expect(delays).toEqual([
      { retry: true, delayMs: 500 },
      { retry: true, delayMs: 1000 },
      { retry: true, delayMs: 2000 },
      { retry: true, delayMs: 4000 },
    ]);
  });

  test("spreads the delay with jitter", () => {
    const jittered = { ...policy, jitter: 0.2 };
    const low = retryDecision(1, {}, { policy: jittered, now: 0, random: () => 0 });
    const high = retryDecision(1, {}, { policy: jittered, now: 0, random: () => 1 });
    expect(low).toEqual({ retry: true, delayMs: 400 });
    expect(high).toEqual({ retry: true, delayMs: 600 });
  });

  test("waits at least as long as Retry-After asks, in seconds or as a date", () => {
    expect(retryDecision(1, { status: 429, retryAfter: "7" }, { policy, now: 0 })).toEqual({
      retry: true,
      delayMs: 7000,
    });
    const now = Date.parse("2025-08-03T18:00:00Z");
    const date = "Sun, 03 Aug 2025 18:00:12 GMT";
    expect(retryDecision(1, { status: 503, retryAfter: date }, { policy, now })).toEqual({
      retry: true,
      delayMs: 12_000,
    });
  });

  test("gives up when Retry-After is longer than the policy allows", () => {
    const decision = retryDecision(1, { status: 429, retryAfter: "3600" }, { policy, now: 0 });
    expect(decision.retry).toBe(false);
    expect(decision).toMatchObject({ reason: expect.stringContaining("3600 s (Retry-After)") });
  });

  test("gives up after the bounded number of retries", () => {
    expect(retryDecision(4, {}, { policy, now: 0 }).retry).toBe(true);
    expect(retryDecision(5, {}, { policy, now: 0 })).toEqual({
      retry: false,
      reason: "gave up after 5 attempts",
    });
  });
});

describe("fetchSearchJson()", () => {
  test("returns the JSON body of a 200", async () => {
    using server = serveSequence([() => Response.json({ hits: [] })]);
    expect(await fetchSearchJson(server.url)).toEqual({ hits: [] });
  });

  test("retries a 429 honouring Retry-After, then succeeds", async () => {
    using server = serveSequence([
      () => new Response("slow down", { status: 429, headers: { "retry-after": "3" } }),
      () => Response.json({ hits: [1] }),
    ]);
    const { waits, sleep } = recordingSleep();
    expect(await fetchSearchJson(server.url, { sleep, policy })).toEqual({ hits: [1] });
    expect(server.count).toBe(2);
    expect(waits).toEqual([3000]);
  });

  test("retries 5xx with growing delays", async () => {
    using server = serveSequence([
      () => new Response("oops", { status: 502 }),
      () => new Response("oops", { status: 503 }),
      () => Response.json({ ok: true }),
    ]);
    const { waits, sleep } = recordingSleep();
    expect(await fetchSearchJson(server.url, { sleep, policy })).toEqual({ ok: true });
    expect(waits).toEqual([500, 1000]);
  });

  test("throws a clear error when 429 never stops", async () => {
    using server = serveSequence([() => new Response("slow down", { status: 429 })]);
    const { waits, sleep } = recordingSleep();
    const failure = fetchSearchJson(server.url, { sleep, policy });
    await expect(failure).rejects.toBeInstanceOf(SearchApiError);
    await expect(failure).rejects.toThrow(
      `Search API request failed (HTTP 429; gave up after 5 attempts): ${server.url}`,
    );
    expect(server.count).toBe(5);
    expect(waits).toEqual([500, 1000, 2000, 4000]);
  });

  test("does not retry a 404", async () => {
    using server = serveSequence([() => new Response("nope", { status: 404 })]);
    const { waits, sleep } = recordingSleep();
    await expect(fetchSearchJson(server.url, { sleep, policy })).rejects.toThrow(
      "HTTP 404 is not retried",
    );
    expect(server.count).toBe(1);
    expect(waits).toEqual([]);
  });

  test("retries network errors, then reports them", async () => {
    const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
    const url = `http://127.0.0.1:${server.port}/search`;
    server.stop(true);
    const { waits, sleep } = recordingSleep();
    await expect(fetchSearchJson(url, { sleep, policy })).rejects.toThrow(/network error/);
    expect(waits).toHaveLength(4);
  });

  test("rejects a body that is not JSON without retrying", async () => {
    using server = serveSequence([() => new Response("<html>captcha</html>")]);
    await expect(fetchSearchJson(server.url, { policy })).rejects.toThrow("not JSON");
    expect(server.count).toBe(1);
  });

  test("logs each retry as a warning", async () => {
    using server = serveSequence([
      () => new Response("", { status: 500 }),
      () => Response.json({}),
    ]);
    const lines: string[] = [];
    await fetchSearchJson(server.url, {
      policy,
      sleep: async () => {},
      logger: { warn: (line: string) => void lines.push(line) },
    });
    expect(lines).toEqual([`Search API HTTP 500, retry 1 of 4 in 500 ms: ${server.url}`]);
  });
});
