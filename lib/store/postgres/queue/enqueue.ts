import { receivers } from "../../../webhooks/fan-out.ts";
import type { ChangeEvent } from "../../../webhooks/model.ts";
import { buildPayload, newMessageId } from "../../../webhooks/payload.ts";
import { CHANGE_CHANNEL } from "../changes.ts";
import { type Db, toNumber } from "../db.ts";
import type { Int8 } from "./rows.ts";

/** Rows per INSERT: the arrays bound to one statement stay a few MB at most. */
const ROWS_PER_STATEMENT = 5000;

/**
 * Fans changes out to the webhooks that get them: the webhooks are read once, then one INSERT
 * per 5,000 deliveries (a single change is one statement, so it is atomic without a transaction
 * of its own). The join drops a webhook disabled since it was read. pg_notify is sent once per
 * transaction however many rows call it, and delivered at commit (the caller's, if any).
 */
export function createEnqueue(db: Db, now: () => number) {
  async function enqueueMany(
    changes: readonly ChangeEvent[],
    options: { webhookId?: number } = {},
  ): Promise<number[]> {
    const webhookId = options.webhookId;
    if (changes.length === 0) return [];
    if (webhookId !== undefined && !Number.isSafeInteger(webhookId)) return [];
    const candidates = (
      webhookId === undefined
        ? await db.sql<Array<{ id: Int8; events: string[] }>>`
            SELECT id, events FROM webhooks WHERE enabled ORDER BY id`
        : await db.sql<Array<{ id: Int8; events: string[] }>>`
            SELECT id, events FROM webhooks WHERE id = ${webhookId} AND enabled`
    ).map((row) => ({ id: toNumber(row.id), events: row.events }));
    const rows = { webhook: [] as number[], message: [] as string[], event: [] as string[] };
    const payloads: string[] = [];
    for (const change of changes) {
      const targets = receivers(candidates, change.event, { only: webhookId });
      if (targets.length === 0) continue;
      const payload = buildPayload(change);
      for (const target of targets) {
        rows.webhook.push(target);
        rows.message.push(newMessageId());
        rows.event.push(change.event);
        payloads.push(payload);
      }
    }
    const t = now();
    const ids: number[] = [];
    for (let start = 0; start < rows.webhook.length; start += ROWS_PER_STATEMENT) {
      const end = start + ROWS_PER_STATEMENT;
      const inserted = await db.sql<Array<{ id: Int8 }>>`
        WITH inserted AS (
          INSERT INTO deliveries (webhook_id, message_id, event, payload, state, attempts,
            next_attempt_at, created_at, updated_at)
          SELECT target.webhook_id, target.message_id, target.event, target.payload,
            'queued', 0, ${t}::bigint, ${t}::bigint, ${t}::bigint
          FROM unnest(${rows.webhook.slice(start, end)}::bigint[],
                      ${rows.message.slice(start, end)}::text[],
                      ${rows.event.slice(start, end)}::text[],
                      ${payloads.slice(start, end)}::text[])
            WITH ORDINALITY AS target(webhook_id, message_id, event, payload, n)
          JOIN webhooks w ON w.id = target.webhook_id AND w.enabled
          ORDER BY target.n
          RETURNING id
        )
        SELECT id, pg_notify(${CHANGE_CHANNEL}, '') AS notified FROM inserted`;
      for (const row of inserted) ids.push(toNumber(row.id));
    }
    return ids.sort((a, b) => a - b);
  }

  return {
    enqueueMany,
    enqueue: (change: ChangeEvent, options: { webhookId?: number } = {}) =>
      enqueueMany([change], options),
  };
}
