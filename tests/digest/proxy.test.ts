import { afterEach, expect, test } from "bun:test";
import { EventEmitter } from "node:events";
import { runCommand } from "citty";
import { createDigestCommand } from "../../lib/digest/command.ts";
import { createMemoryLogger } from "../../lib/log.ts";
import { startConnectProxy } from "../fakes/connect-proxy.ts";
import { startDigestWorld } from "../fakes/digest-world.ts";
import { commentHit, storyHit } from "../fakes/hn-search.ts";
import { tempDirs } from "../fakes/temp-dirs.ts";

const tempDir = tempDirs("digest-proxy-");
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

test("DIGEST_PROXY_URL carries the search API's requests with its credentials; HTTP_PROXY and HTTPS_PROXY are not used, and said so", async () => {
  const ask = storyHit({
    title: "Ask HN: Proxies?",
    url: undefined,
    story_text: "Which?",
    num_comments: 1,
  });
  using world = startDigestWorld({
    stories: [ask],
    comments: {
      [Number(ask.objectID)]: [commentHit(Number(ask.objectID), { comment_text: "Squid." })],
    },
  });
  const proxy = await startConnectProxy({
    user: "digest",
    password: "hunter2",
    hosts: { "search.test": "127.0.0.1" },
  });
  cleanups.push(() => proxy.stop());
  const search = new URL(world.search.url);
  const env: Record<string, string> = {
    XDG_CACHE_HOME: tempDir(),
    ...world.env,
    HN_SEARCH_URL: `http://search.test:${search.port}${search.pathname.replace(/\/$/, "")}`,
    DIGEST_PROXY_URL: proxy.url,
    HTTP_PROXY: "http://127.0.0.1:9",
    HTTPS_PROXY: "http://127.0.0.1:9",
  };
  const logger = createMemoryLogger();
  const stdout: string[] = [];
  await runCommand(
    createDigestCommand({
      env,
      stdout: { write: (text: string) => void stdout.push(text) },
      stderr: { isTTY: false, columns: 120, write: () => {} },
      logger,
      sleep: async () => {},
      now: () => Date.parse("2025-08-03T18:54:41Z"),
      timeZone: "UTC",
      signals: { source: new EventEmitter() },
    }),
    { rawArgs: [] },
  );
  expect(stdout.join("")).toContain(
    "**Discussion.** Summary of the discussion of Ask HN: Proxies?.",
  );
  // The search API by name through the proxy; the model server (loopback) directly.
  expect(proxy.requests.length).toBeGreaterThan(0);
  for (const request of proxy.requests) {
    expect(request).toMatchObject({ method: "GET", authorized: true });
    expect(request.target).toStartWith(`http://search.test:${search.port}/`);
  }
  expect(world.ollama.requests.length).toBeGreaterThan(0);
  expect(env.HTTP_PROXY).toBeUndefined();
  expect(logger.lines).toContain(
    "info HTTP_PROXY, HTTPS_PROXY set in the environment: not used (the digest's requests go through DIGEST_PROXY_URL only)",
  );
  expect(logger.lines.join("\n")).not.toContain("hunter2");
});
