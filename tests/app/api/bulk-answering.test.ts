import { afterEach, expect, test } from "bun:test";
import { createApp } from "../../../lib/app/create-app.ts";
import { DEFAULT_PACE } from "../../../lib/webhooks/delivery/replay.ts";
import type { DeliveryQueue, Store } from "../../../lib/webhooks/ports.ts";
import { bodyOf, rawHttp, statusOf } from "../../fakes/raw-http.ts";
import { insertDeliveries, openSqliteDb } from "../../fakes/sqlite-db.ts";

const T0 = Date.UTC(2030, 0, 1);
const LATER = T0 + 3_600_000;
const COUNT = 400;
const CHUNK = 4;

const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const done of cleanup.splice(0).reverse()) await done();
});

/**
 * The app served on a real socket, its queue's bulk writes logged: a retry or replay of COUNT
 * deliveries in chunks of CHUNK with the production pause between chunks, and another client's
 * GET sent over TCP once the first chunk is written. The log's order shows whether that GET was
 * answered while the bulk work went on.
 */
function servedApp(state: "failed" | "successful") {
  const { db, store } = openSqliteDb({ now: () => LATER });
  cleanup.push(() => store.close());
  insertDeliveries(db, { count: COUNT, state, from: T0 });

  const log: string[] = [];
  let port = 0;
  let other: Promise<string> | null = null;
  const logged = (write: (ids: number[], now: number) => Promise<number>) => {
    return (ids: number[], now: number) => {
      log.push("chunk");
      other ??= rawHttp(
        port,
        "GET /api/deliveries/1 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
      ).then((answer) => {
        log.push("other client answered");
        return answer;
      });
      return write(ids, now);
    };
  };
  const queue: DeliveryQueue = {
    ...store.queue,
    retry: logged(store.queue.retry),
    replay: logged(store.queue.replay),
  };
  const app = createApp({
    store: { ...store, queue } as Store,
    now: () => new Date(LATER),
    // The production pause; chunks of a fixed size (no targetMs), so their number is known.
    bulkPace: { pause: DEFAULT_PACE.pause, chunkSize: CHUNK },
  });
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: app.fetch });
  cleanup.push(() => server.stop(true));
  port = server.port ?? 0;

  async function post(path: string, body: unknown): Promise<unknown> {
    const json = JSON.stringify(body);
    const answer = await rawHttp(
      port,
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${json.length}\r\nConnection: close\r\n\r\n${json}`,
    );
    log.push("bulk answered");
    expect(statusOf(answer)).toBe(200);
    return JSON.parse(bodyOf(answer));
  }
  return { db, log, post, other: () => other };
}

/** Where the other client's answer came: after the first chunk and before the last. */
function answeredBetweenChunks(log: string[]): void {
  const answered = log.indexOf("other client answered");
  expect(log.filter((entry) => entry === "chunk")).toHaveLength(COUNT / CHUNK);
  expect(answered).toBeGreaterThan(log.indexOf("chunk"));
  expect(answered).toBeLessThan(log.lastIndexOf("chunk"));
}

test("POST /api/deliveries/retry by filter answers another client between its chunks", async () => {
  const { db, log, post, other } = servedApp("failed");
  expect(await post("/api/deliveries/retry", { webhook: 1 })).toMatchObject({
    retried: COUNT,
    matched: COUNT,
  });
  expect(statusOf((await other()) ?? "")).toBe(200);
  answeredBetweenChunks(log);
  const queued = db.query("SELECT count(*) AS n FROM deliveries WHERE state = 'queued'").get();
  expect(queued).toEqual({ n: COUNT });
});

test("POST /api/deliveries/replay answers another client between its chunks", async () => {
  const { db, log, post, other } = servedApp("successful");
  expect(await post("/api/deliveries/replay", { webhook: 1 })).toMatchObject({
    replayed: COUNT,
    matched: COUNT,
  });
  expect(statusOf((await other()) ?? "")).toBe(200);
  answeredBetweenChunks(log);
  const queued = db.query("SELECT count(*) AS n FROM deliveries WHERE state = 'queued'").get();
  expect(queued).toEqual({ n: COUNT });
});
