import type { Database } from "bun:sqlite";
import type { OperationalEvent } from "../../webhooks/model.ts";
import type {
  OperationalEventRecord,
  OperationalEventRepo,
  StoredOperationalEvent,
} from "../../webhooks/ports.ts";

/**
 * Records an operational event inside the caller's transaction (finish, disable), only when an
 * enabled webhook other than the one it is about subscribes to it: with no subscriber nothing
 * is written, and the table stays empty.
 */
export function createSqliteEventRecorder(
  db: Database,
): (event: OperationalEventRecord, at: number) => void {
  const recordStmt = db.prepare<unknown, [string, number, string, number]>(
    `INSERT INTO operational_events (event, not_for, data, created_at)
     SELECT ?1, ?2, ?3, ?4
     WHERE EXISTS (SELECT 1 FROM webhooks w, json_each(w.events) e
                   WHERE w.enabled = 1 AND w.id <> ?2 AND e.value = ?1)`,
  );
  return (event, at) => {
    recordStmt.run(event.event, event.notFor, event.data, at);
  };
}

interface EventRow {
  id: number;
  event: string;
  not_for: number;
  data: string;
  created_at: number;
}

/** Operational events waiting to be fanned out. */
export function createSqliteEventRepo(db: Database): OperationalEventRepo {
  const anyStmt = db.prepare<{ found: number }, []>(
    "SELECT 1 AS found FROM operational_events LIMIT 1",
  );
  const peekStmt = db.prepare<EventRow, [number]>(
    "SELECT id, event, not_for, data, created_at FROM operational_events ORDER BY id LIMIT ?",
  );
  const takeStmt = db.prepare<EventRow, [number]>(
    `DELETE FROM operational_events
     WHERE id IN (SELECT id FROM operational_events ORDER BY id LIMIT ?)
     RETURNING id, event, not_for, data, created_at`,
  );
  return {
    async hasPending() {
      return anyStmt.get() !== null;
    },
    async peek(limit) {
      return peekStmt.all(limit).map(toEvent);
    },
    async take(limit) {
      return takeStmt
        .all(limit)
        .map(toEvent)
        .sort((a, b) => a.id - b.id);
    },
  };
}

function toEvent(row: EventRow): StoredOperationalEvent {
  return {
    id: row.id,
    event: row.event as OperationalEvent,
    notFor: row.not_for,
    data: row.data,
    createdAt: row.created_at,
  };
}
