import { perTest } from "./per-test.ts";
/**
 * A webhook receiver for tests: real HTTP on 127.0.0.1, port 0. It records every request and
 * answers with `respond` (200 "ok" by default); `waitForRequests(n)` resolves when the n-th
 * request has arrived, so tests await progress instead of sleeping.
 */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  /** performance.now() at arrival. */
  at: number;
}

export interface FakeEndpoint {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  waitForRequests(count: number): Promise<void>;
  stop(): Promise<void>;
}

export type Responder = (request: ReceivedRequest, index: number) => Response | Promise<Response>;

export function startFakeEndpoint(respond: Responder = () => new Response("ok")): FakeEndpoint {
  const requests: ReceivedRequest[] = [];
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    async fetch(request) {
      const url = new URL(request.url);
      const received: ReceivedRequest = {
        method: request.method,
        path: url.pathname + url.search,
        headers: Object.fromEntries(request.headers),
        body: await request.text(),
        at: performance.now(),
      };
      const index = requests.push(received) - 1;
      for (const waiter of waiters.filter((w) => requests.length >= w.count)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
      return respond(received, index);
    },
  });
  const port = server.port ?? 0;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    waitForRequests(count) {
      if (requests.length >= count) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ count, resolve }));
    },
    async stop() {
      await server.stop(true);
    },
  };
}

/** A promise that resolves when `resolve()` is called: lets a fake hold a response open. */
export function gate(): { promise: Promise<void>; open(): void } {
  let open: () => void = () => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/**
 * A responder whose first request hangs until `release()` (a slow answer, or a worker paused
 * with a request in flight); every other request is answered 200 "ok" at once.
 */
export function hangFirst(): { respond: Responder; release(): void } {
  const hang = gate();
  let first = true;
  return {
    async respond() {
      if (first) {
        first = false;
        await hang.promise;
      }
      return new Response("ok");
    },
    release: hang.open,
  };
}

/** For a file or describe: a fake endpoint per test answering with `respond`, stopped after it. */
export function useFakeEndpoint(respond?: Responder): FakeEndpoint {
  return perTest(
    () => startFakeEndpoint(respond),
    (endpoint) => endpoint.stop(),
  );
}
