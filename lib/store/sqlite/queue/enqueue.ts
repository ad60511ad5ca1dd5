import type { Database, SQLQueryBindings, Statement } from "bun:sqlite";
import { receivers } from "../../../webhooks/fan-out.ts";
import type { ChangeEvent } from "../../../webhooks/model.ts";
import { buildPayload, newMessageId } from "../../../webhooks/payload.ts";

const MAX_ROWS_PER_INSERT = 32;

/**
 * Fans a change out to the webhooks that get it: one INSERT per 32 rows (payload and time bound
 * once). Returns the transaction function; the caller runs it (immediate, or inside its own).
 */
export function createEnqueue(db: Database, now: () => number) {
  const enabledTargetsStmt = db.prepare<{ id: number; events: string }, []>(
    "SELECT id, events FROM webhooks WHERE enabled = 1 ORDER BY id",
  );
  const enabledTargetStmt = db.prepare<{ id: number; events: string }, [number]>(
    "SELECT id, events FROM webhooks WHERE id = ? AND enabled = 1",
  );
  const insertStmts = new Map<number, Statement<{ id: number }, SQLQueryBindings[]>>();
  function insertDeliveriesStmt(count: number) {
    let stmt = insertStmts.get(count);
    if (!stmt) {
      const rows = Array.from(
        { length: count },
        (_, i) => `(?${4 + 2 * i}, ?${5 + 2 * i}, ?1, ?2, 'queued', 0, ?3, ?3, ?3)`,
      );
      stmt = db.prepare(
        `INSERT INTO deliveries (webhook_id, message_id, event, payload, state, attempts,
           next_attempt_at, created_at, updated_at)
         VALUES ${rows.join(", ")}
         RETURNING id`,
      );
      insertStmts.set(count, stmt);
    }
    return stmt;
  }

  // The events column is JSON text; most webhooks share a handful of lists.
  const parsedEvents = new Map<string, string[]>();
  function eventsOf(events: string): string[] {
    let list = parsedEvents.get(events);
    if (!list) {
      list = JSON.parse(events) as string[];
      if (parsedEvents.size >= 1000) parsedEvents.clear();
      parsedEvents.set(events, list);
    }
    return list;
  }

  return db.transaction((change: ChangeEvent, webhookId: number | undefined): number[] => {
    const rows =
      webhookId === undefined
        ? enabledTargetsStmt.all()
        : [enabledTargetStmt.get(webhookId)].filter((row) => row !== null);
    const targets = receivers(
      rows.map((row) => ({ id: row.id, events: eventsOf(row.events) })),
      change.event,
      { only: webhookId },
    );
    if (targets.length === 0) return [];
    const payload = buildPayload(change);
    const t = now();
    const ids: number[] = [];
    for (let start = 0; start < targets.length; start += MAX_ROWS_PER_INSERT) {
      const chunk = targets.slice(start, start + MAX_ROWS_PER_INSERT);
      const values: SQLQueryBindings[] = [change.event, payload, t];
      for (const id of chunk) values.push(id, newMessageId(undefined, t));
      const inserted = insertDeliveriesStmt(chunk.length).all(...values);
      if (inserted.length !== chunk.length) throw new Error("Inserting deliveries returned no ids");
      for (const row of inserted) ids.push(row.id);
    }
    return ids.sort((a, b) => a - b);
  });
}
