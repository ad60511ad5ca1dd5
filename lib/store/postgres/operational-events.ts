import type { OperationalEvent } from "../../webhooks/model.ts";
import type { OperationalEventRepo, StoredOperationalEvent } from "../../webhooks/ports.ts";
import { type Db, toNumber } from "./db.ts";

/**
 * The condition under which an operational event is recorded (disable; finish writes the same
 * inline): an enabled webhook other than the one it is about subscribes to it.
 */
export function subscribedSql(event: string, notFor: string): string {
  return `EXISTS (SELECT 1 FROM webhooks w WHERE w.enabled AND w.id <> ${notFor} AND w.events ? ${event})`;
}

interface EventRow {
  id: string | number;
  event: string;
  not_for: string | number;
  data: string;
  created_at: string | number;
}

/** Operational events waiting to be fanned out. */
export function createPostgresEventRepo(db: Db): OperationalEventRepo {
  return {
    async hasPending() {
      const rows = await db.sql`SELECT 1 FROM operational_events LIMIT 1`;
      return rows.length > 0;
    },
    async peek(limit) {
      const rows = await db.sql<EventRow[]>`
        SELECT id, event, not_for, data, created_at FROM operational_events
        ORDER BY id LIMIT ${limit}`;
      return rows.map(toEvent);
    },
    async take(limit) {
      // SKIP LOCKED: workers relaying at once take different events.
      const rows = await db.sql<EventRow[]>`
        DELETE FROM operational_events
        WHERE id IN (SELECT id FROM operational_events ORDER BY id LIMIT ${limit}
                     FOR UPDATE SKIP LOCKED)
        RETURNING id, event, not_for, data, created_at`;
      return rows.map(toEvent).sort((a, b) => a.id - b.id);
    },
  };
}

function toEvent(row: EventRow): StoredOperationalEvent {
  return {
    id: toNumber(row.id),
    event: row.event as OperationalEvent,
    notFor: toNumber(row.not_for),
    data: row.data,
    createdAt: toNumber(row.created_at),
  };
}
