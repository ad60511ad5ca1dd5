import type { WorkerInfo } from "../../webhooks/model.ts";
import type { WorkerRegistry } from "../../webhooks/ports.ts";
import type { StoreClock } from "./clock.ts";
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
  heartbeat_ms: number | null;
}

/**
 * Worker heartbeats in the `workers` table (one row per running worker, upserted), stamped with
 * the database's clock; list() shifts them into the reader's, so staleness is a distance the
 * database measured (see clock.ts).
 */
export function createPostgresWorkerRegistry(db: Db, clock: StoreClock): WorkerRegistry {
  return {
    async heartbeat(info: WorkerInfo) {
      // The worker's uptime so far, placed on the database's clock.
      const uptime = Math.max(0, info.lastSeenAt - info.startedAt);
      // Stamped when written (clock_timestamp(): after any wait for a lock), as on SQLite.
      await db.sql`
        WITH clock AS (
          SELECT coalesce(${clock.param(info.lastSeenAt)}::bigint, (extract(epoch from clock_timestamp()) * 1000)::bigint) AS t
        )
        INSERT INTO workers (id, host, pid, version, started_at, last_seen_at, in_flight,
          concurrency, heartbeat_ms)
        SELECT ${info.id}, ${info.host}, ${info.pid}, ${info.version}, t - ${uptime}::bigint,
          t, ${info.inFlight}, ${info.concurrency}, ${info.heartbeatMs ?? null}::int
        FROM clock
        ON CONFLICT (id) DO UPDATE SET host = excluded.host, pid = excluded.pid,
          version = excluded.version, last_seen_at = excluded.last_seen_at,
          in_flight = excluded.in_flight, concurrency = excluded.concurrency,
          heartbeat_ms = excluded.heartbeat_ms`;
    },
    async remove(id) {
      await db.sql`DELETE FROM workers WHERE id = ${id}`;
    },
    async list() {
      const callerNow = clock.callerNow();
      const rows = await db.sql<Array<WorkerRow & { clock_now: string | number }>>`
        SELECT *, (extract(epoch from now()) * 1000)::bigint AS clock_now FROM workers ORDER BY started_at, id`;
      const local = (t: string | number, row: { clock_now: string | number }) =>
        clock.toCaller(toNumber(t), toNumber(row.clock_now), callerNow);
      return rows.map((row) => ({
        id: row.id,
        host: row.host,
        pid: row.pid,
        version: row.version,
        startedAt: local(row.started_at, row),
        lastSeenAt: local(row.last_seen_at, row),
        inFlight: row.in_flight,
        concurrency: row.concurrency,
        ...(row.heartbeat_ms === null ? {} : { heartbeatMs: row.heartbeat_ms }),
      }));
    },
  };
}
