/**
 * bench:webhooks reference: what the queue's SQL costs per delivery on SQLite, with no HTTP: the
 * worker's statements in one process on a file database (WAL, synchronous=NORMAL), claims of
 * 256 and results committed 64 at a time (RESULTS_PER_COMMIT) through finishMany, as the worker
 * does. Microseconds of wall time per delivery, claim and results apart.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStore } from "../lib/store/sqlite/store.ts";
import type { AttemptRecord } from "../lib/webhooks/model.ts";
import { RESULTS_PER_COMMIT } from "../lib/worker/bind.ts";
import { enqueueBench } from "./shared.ts";

const CLAIM_SIZE = 256;

export interface SqlCost {
  claimUs: number;
  resultsUs: number;
  totalUs: number;
}

export async function sqlCostPerDelivery(jobs: number): Promise<SqlCost> {
  const dir = mkdtempSync(join(tmpdir(), "bench-sql-"));
  const store = openSqliteStore(join(dir, "sql.db"));
  try {
    await store.webhooks.create({ name: "sink", url: "http://127.0.0.1:9/hook" });
    await enqueueBench(store, jobs);
    let claiming = 0;
    let recording = 0;
    for (let done = 0; done < jobs; ) {
      let started = performance.now();
      const claims = await store.queue.claim({
        workerId: "sql",
        limit: CLAIM_SIZE,
        leaseMs: 60_000,
        now: Date.now(),
      });
      claiming += performance.now() - started;
      if (claims.length === 0) throw new Error(`only ${done} of ${jobs} were claimed`);
      started = performance.now();
      for (let at = 0; at < claims.length; at += RESULTS_PER_COMMIT) {
        const items = claims.slice(at, at + RESULTS_PER_COMMIT).map((claim) => ({
          claim,
          record: okRecord(),
          outcome: { state: "successful" as const },
        }));
        await store.queue.finishMany(items);
      }
      recording += performance.now() - started;
      done += claims.length;
    }
    const claimUs = (claiming * 1000) / jobs;
    const resultsUs = (recording * 1000) / jobs;
    return { claimUs, resultsUs, totalUs: claimUs + resultsUs };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function okRecord(): AttemptRecord {
  return {
    startedAt: Date.now(),
    durationMs: 1.2,
    statusCode: 200,
    outcome: "success",
    error: null,
    responseHeaders: "content-type: text/plain\n",
    responseBody: "ok",
  };
}
