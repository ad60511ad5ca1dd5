import type { Database } from "bun:sqlite";
import type { WorkerInfo } from "../../webhooks/model.ts";
import type { WorkerRegistry } from "../../webhooks/ports.ts";
import { type AvailabilityWatch, clockUnderLock } from "./queue/availability.ts";

interface WorkerRow {
  id: string;
  host: string;
  pid: number;
  version: string;
  started_at: number;
  last_seen_at: number;
  in_flight: number;
  concurrency: number;
  heartbeat_ms: number | null;
}

/**
 * Worker heartbeats in the `workers` table (one row per running worker, upserted). A beat is
 * written through `availability` (the queue's): one that waited long for the lock or could not
 * be written means an outage, which this process's next claim notes before any takeover, even
 * when the worker was idle through it and made no other write.
 */
export function createSqliteWorkerRegistry(
  db: Database,
  options: { availability?: Pick<AvailabilityWatch, "write">; now?: () => number } = {},
): WorkerRegistry {
  const write = options.availability?.write ?? (<T>(fn: () => T) => fn());
  const underLock = clockUnderLock(options.now);
  const upsertStmt = db.prepare<unknown, Record<string, string | number | null>>(
    `INSERT INTO workers (id, host, pid, version, started_at, last_seen_at, in_flight, concurrency,
       heartbeat_ms)
     VALUES ($id, $host, $pid, $version, $started_at, $last_seen_at, $in_flight, $concurrency,
       $heartbeat_ms)
     ON CONFLICT (id) DO UPDATE SET host = excluded.host, pid = excluded.pid,
       version = excluded.version, started_at = excluded.started_at,
       last_seen_at = excluded.last_seen_at, in_flight = excluded.in_flight,
       concurrency = excluded.concurrency, heartbeat_ms = excluded.heartbeat_ms`,
  );
  const removeStmt = db.prepare<unknown, [string]>("DELETE FROM workers WHERE id = ?");
  const listStmt = db.prepare<WorkerRow, []>("SELECT * FROM workers ORDER BY started_at, id");
  // A beat is stamped with the time it is written, not the time it was asked for: one that
  // waited through an outage must not look older than it is.
  const upsertTx = db.transaction((info: WorkerInfo) =>
    upsertStmt.run({
      id: info.id,
      host: info.host,
      pid: info.pid,
      version: info.version,
      started_at: info.startedAt,
      last_seen_at: underLock(info.lastSeenAt),
      in_flight: info.inFlight,
      concurrency: info.concurrency,
      heartbeat_ms: info.heartbeatMs ?? null,
    }),
  );
  const removeTx = db.transaction((id: string) => removeStmt.run(id));

  return {
    async heartbeat(info) {
      write(() => upsertTx.immediate(info));
    },
    async remove(id) {
      removeTx.immediate(id);
    },
    async list() {
      return listStmt.all().map((row) => ({
        id: row.id,
        host: row.host,
        pid: row.pid,
        version: row.version,
        startedAt: row.started_at,
        lastSeenAt: row.last_seen_at,
        inFlight: row.in_flight,
        concurrency: row.concurrency,
        ...(row.heartbeat_ms === null ? {} : { heartbeatMs: row.heartbeat_ms }),
      }));
    },
  };
}
