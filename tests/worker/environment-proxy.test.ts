import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { change } from "../fakes/change.ts";
import { startConnectProxy } from "../fakes/connect-proxy.ts";
import { databaseFileAndEndpoint } from "../fakes/database-file.ts";
import { spawnWorker } from "../fakes/worker-process.ts";

setDefaultTimeout(60_000);

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

test("`worker --once` with HTTP_PROXY and HTTPS_PROXY in its environment: not used, said once; WEBHOOK_PROXY_URL named with its password masked", async () => {
  const { path, store, endpoint } = databaseFileAndEndpoint(undefined, {
    cleanups,
    prefix: "env-proxy-",
  });
  const proxy = await startConnectProxy({ user: "relay", password: "hunter2" });
  cleanups.push(() => proxy.stop());
  await store.webhooks.create({ name: "direct", url: endpoint.url });
  await store.queue.enqueue(change());

  // Bun's fetch would send to 127.0.0.1 through HTTP_PROXY by itself (NO_PROXY "" lists nothing).
  const child = spawnWorker(path, {
    env: {
      HTTP_PROXY: proxy.url,
      HTTPS_PROXY: proxy.url,
      http_proxy: proxy.url,
      NO_PROXY: "",
      WEBHOOK_PROXY_URL: proxy.url,
      WEBHOOK_MAX_ATTEMPTS: "1",
    },
    args: ["--once"],
    cleanups,
  });
  expect(await child.exited).toBe(0);
  const output =
    (await new Response(child.stdout).text()) + (await new Response(child.stderr).text());

  expect(endpoint.requests).toHaveLength(1);
  expect(proxy.requests).toEqual([]);
  expect((await store.queue.list({ limit: 10 })).map((d) => d.state)).toEqual(["successful"]);
  expect(output).toContain(
    "HTTP_PROXY, http_proxy, HTTPS_PROXY, NO_PROXY set in the environment: not used by the worker (deliveries go through WEBHOOK_PROXY_URL only)",
  );
  expect(output).toContain(`; proxy http://relay:***@127.0.0.1:${proxy.port}`);
  expect(output).not.toContain("hunter2");
});
