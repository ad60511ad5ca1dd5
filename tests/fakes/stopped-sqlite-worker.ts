/**
 * A worker that stops itself (SIGSTOP) while it holds SQLite's write lock, with results in hand:
 * it beats, claims `limit` deliveries, POSTs each to `url` as the worker would (its webhook-id),
 * then opens a write transaction and stops inside it. Continued (SIGCONT), it commits, beats,
 * writes the results it held and prints, as JSON, which applied.
 * `bun tests/fakes/stopped-sqlite-worker.ts <database> <url> <limit> <leaseMs>`
 */
import { openSqliteStore } from "../../lib/store/sqlite/store.ts";
import type { FinishItem } from "../../lib/webhooks/ports.ts";

const [path = "", url = "", limit = "4", leaseMs = "6000"] = process.argv.slice(2);
const store = openSqliteStore(path);
const id = `stopped-worker-${process.pid}`;
const beat = () =>
  store.workers.heartbeat({
    id,
    host: "test",
    pid: process.pid,
    version: "0",
    startedAt: Date.now(),
    lastSeenAt: Date.now(),
    inFlight: 0,
    concurrency: Number(limit),
    heartbeatMs: 1000,
  });
await beat();
const claims = await store.queue.claim({
  workerId: id,
  limit: Number(limit),
  leaseMs: Number(leaseMs),
  now: Date.now(),
});
const results: FinishItem[] = [];
for (const claim of claims) {
  const startedAt = Date.now();
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", "webhook-id": claim.delivery.messageId },
    body: claim.delivery.payload,
  });
  const body = await response.text();
  results.push({
    claim,
    record: {
      startedAt,
      durationMs: Date.now() - startedAt,
      statusCode: response.status,
      outcome: "success",
      error: null,
      responseHeaders: null,
      responseBody: body,
    },
    outcome: { state: "successful" },
  });
}
console.log(JSON.stringify({ claimed: claims.length }));
// The write lock taken, then stopped inside the transaction (as a process paused mid-commit).
await store.transaction(async () => {
  process.kill(process.pid, "SIGSTOP");
});
await beat();
console.log(JSON.stringify({ applied: await store.queue.finishMany(results) }));
await store.close();
