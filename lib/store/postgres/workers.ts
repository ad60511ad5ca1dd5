import type { WorkerInfo } from "../../webhooks/model.ts";
import type { WorkerRegistry } from "../../webhooks/ports.ts";
import { type Db, toNumber } from "./db.ts";

interface WorkerRow {
  id: string;
  host: string;
  pid: number;
  version: string;
  started_at: string | number;
  last_seen_at: string | number;
  in_flight: number;
  concurrency: number;
}

/** Worker heartbeats in the `workers` table (one row per running worker, upserted). */
export function createPostgresWorkerRegistry(db: Db): WorkerRegistry {
  return {
    async heartbeat(info: WorkerInfo) {
      await db.sql`
        INSERT INTO workers (id, host, pid, version, started_at, last_seen_at, in_flight,
          concurrency)
        VALUES (${info.id}, ${info.host}, ${info.pid}, ${info.version}, ${info.startedAt},
          ${info.lastSeenAt}, ${info.inFlight}, ${info.concurrency})
        ON CONFLICT (id) DO UPDATE SET host = excluded.host, pid = excluded.pid,
          version = excluded.version, started_at = excluded.started_at,
          last_seen_at = excluded.last_seen_at, in_flight = excluded.in_flight,
          concurrency = excluded.concurrency`;
    },
    async remove(id) {
      await db.sql`DELETE FROM workers WHERE id = ${id}`;
    },
    async list() {
      const rows = await db.sql<WorkerRow[]>`SELECT * FROM workers ORDER BY started_at, id`;
      return rows.map((row) => ({
        id: row.id,
        host: row.host,
        pid: row.pid,
        version: row.version,
        startedAt: toNumber(row.started_at),
        lastSeenAt: toNumber(row.last_seen_at),
        inFlight: row.in_flight,
        concurrency: row.concurrency,
      }));
    },
  };
}
