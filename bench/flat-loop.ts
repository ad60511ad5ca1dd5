/**
 * bench:webhooks reference: the floor of our own design. A flat loop doing what the worker does
 * for each delivery, on the same store, with the same SQL (results group-committed as the worker
 * does: 64 or 5 ms, through finishMany),
 * the same request (buildRequest: headers, signatures) and the same fetch options, one timer
 * and AbortController per attempt, the response read and recorded as an attempt, and nothing
 * else: no lease checks, no rechecks, no retry policy, no hooks, no outage handling.
 * `bun bench/flat-loop.ts <database> <concurrency>` delivers everything due, then exits.
 */
import { batch } from "../lib/async/batch.ts";
import { openSqliteStore } from "../lib/store/sqlite/store.ts";
import type { AttemptRecord, Claim } from "../lib/webhooks/model.ts";
import type { FinishItem, Store } from "../lib/webhooks/ports.ts";
import { buildRequest } from "../lib/webhooks/sending/request.ts";
import { RESULT_WINDOW_MS, RESULTS_PER_COMMIT } from "../lib/worker/bind.ts";

const LEASE_MS = 60_000;
const TIMEOUT_MS = 10_000;

async function deliverAll(path: string, concurrency: number): Promise<number> {
  const store = openSqliteStore(path);
  const delivered = await deliverAllFrom(store, concurrency);
  await store.close();
  return delivered;
}

/** Delivers everything due in `store` (left open), with `fetch` (tests and loop-layers pass fakes). */
export async function deliverAllFrom(
  store: Store,
  concurrency: number,
  fetchFn: typeof fetch = fetch,
): Promise<number> {
  const ready: Claim[] = [];
  let busy = 0;
  let delivered = 0;
  let claiming = false;
  /** Results waiting for their group commit: the loop ends only once none is left. */
  let recording = 0;
  const finished = Promise.withResolvers<void>();
  const finish = batch((items: FinishItem[]) => store.queue.finishMany(items), {
    maxSize: RESULTS_PER_COMMIT,
    windowMs: RESULT_WINDOW_MS,
  });

  async function topUp(): Promise<void> {
    if (claiming || ready.length >= concurrency) return;
    claiming = true;
    const limit = 3 * concurrency - busy - ready.length;
    const claims = await store.queue.claim({
      workerId: "flat",
      limit,
      leaseMs: LEASE_MS,
      now: Date.now(),
    });
    claiming = false;
    if (claims.length === 0) {
      // Nothing due: the next request to end looks again (a claim that finds nothing answers
      // without yielding to the event loop, so looking again at once would spin).
      if (busy === 0 && ready.length === 0 && recording === 0) finished.resolve();
      return;
    }
    ready.push(...claims);
    startReady();
  }

  function startReady(): void {
    while (busy < concurrency && ready.length > 0) {
      busy++;
      void send(ready.shift() as Claim);
    }
    if (ready.length < concurrency) void topUp();
  }

  async function send(claim: Claim): Promise<void> {
    const startedAt = Date.now();
    const started = performance.now();
    const request = buildRequest(claim.webhook, claim.delivery, Math.floor(startedAt / 1000));
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), TIMEOUT_MS);
    const record: AttemptRecord = {
      startedAt,
      durationMs: 0,
      statusCode: null,
      outcome: "network_error",
      error: null,
      responseHeaders: null,
      responseBody: null,
    };
    try {
      const response = await fetchFn(request.url, {
        method: request.method,
        headers: request.headers,
        body: request.body,
        redirect: "manual",
        signal: controller.signal,
        decompress: false,
      });
      record.responseBody = await response.text();
      let headers = "";
      for (const [name, value] of response.headers) headers += `${name}: ${value}\n`;
      record.responseHeaders = headers;
      record.statusCode = response.status;
      record.outcome = response.ok ? "success" : "http_error";
    } catch (error) {
      record.error = String(error);
    } finally {
      clearTimeout(timer);
    }
    record.durationMs = performance.now() - started;
    busy--;
    startReady();
    recording++;
    await finish({
      claim,
      record,
      outcome: { state: record.outcome === "success" ? "successful" : "failed" },
    });
    recording--;
    delivered++;
    if (ready.length < concurrency) void topUp();
  }

  void topUp();
  await finished.promise;
  return delivered;
}

if (import.meta.main) {
  const [path, concurrency] = process.argv.slice(2);
  if (!path) throw new Error("usage: bun bench/flat-loop.ts <database> <concurrency>");
  await deliverAll(path, Number(concurrency ?? 64));
  // Done and the store closed: without this the process lingers on a handle left open (not
  // tracked down; the worker command exits on its own), and the bench would wait for it.
  process.exit(0);
}
