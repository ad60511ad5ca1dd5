import { receivers } from "../../../webhooks/fan-out.ts";
import type { ChangeEvent } from "../../../webhooks/model.ts";
import { buildPayload, newMessageId } from "../../../webhooks/payload.ts";
import { CHANGE_CHANNEL } from "../changes.ts";
import { type Db, toNumber } from "../db.ts";
import type { Int8 } from "./rows.ts";

/** Fans a change out to the webhooks that get it, in one INSERT. */
export function createEnqueue(db: Db, now: () => number) {
  return async function enqueue(
    change: ChangeEvent,
    options: { webhookId?: number } = {},
  ): Promise<number[]> {
    const webhookId = options.webhookId;
    if (webhookId !== undefined && !Number.isSafeInteger(webhookId)) return [];
    const candidates =
      webhookId === undefined
        ? await db.sql<Array<{ id: Int8; events: string[] }>>`
            SELECT id, events FROM webhooks WHERE enabled ORDER BY id`
        : await db.sql<Array<{ id: Int8; events: string[] }>>`
            SELECT id, events FROM webhooks WHERE id = ${webhookId} AND enabled`;
    const targets = receivers(
      candidates.map((row) => ({ id: toNumber(row.id), events: row.events })),
      change.event,
      { only: webhookId },
    );
    if (targets.length === 0) return [];
    const payload = buildPayload(change);
    const t = now();
    // One statement, so the fan-out is atomic without a transaction of its own; the join
    // drops a webhook disabled since it was read. pg_notify is sent once per transaction
    // however many rows call it, and delivered at commit (the caller's, when there is one).
    const rows = await db.sql<Array<{ id: Int8 }>>`
      WITH inserted AS (
        INSERT INTO deliveries (webhook_id, message_id, event, payload, state, attempts,
          next_attempt_at, created_at, updated_at)
        SELECT target.webhook_id, target.message_id, ${change.event}::text, ${payload}::text,
          'queued', 0, ${t}::bigint, ${t}::bigint, ${t}::bigint
        FROM unnest(${targets}::bigint[], ${targets.map(() => newMessageId())}::text[])
          WITH ORDINALITY AS target(webhook_id, message_id, n)
        JOIN webhooks w ON w.id = target.webhook_id AND w.enabled
        ORDER BY target.n
        RETURNING id
      )
      SELECT id, pg_notify(${CHANGE_CHANNEL}, '') AS notified FROM inserted`;
    return rows.map((row) => toNumber(row.id)).sort((a, b) => a - b);
  };
}
