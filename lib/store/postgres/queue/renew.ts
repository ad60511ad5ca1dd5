import type { Claim } from "../../../webhooks/model.ts";
import { CHANGE_CHANNEL } from "../changes.ts";
import type { StoreClock } from "../clock.ts";
import { type Db, toNumber } from "../db.ts";
import { type WebhookRow, webhookFromRow } from "../webhooks.ts";
import type { Int8 } from "./rows.ts";

/**
 * Re-checks held claims right before they are sent (see DeliveryQueue.renew), in one
 * statement: the claims still ours and within their lease, of an enabled webhook, get a new
 * lease and come back with the webhook as it is now; those whose lease ran out or whose webhook
 * was disabled are given back unattempted; the rest (taken over, finished, webhook deleted) are
 * simply not sent.
 */
export function createRenew(db: Db, clock: StoreClock) {
  return async function renew(
    claims: Claim[],
    options: { leaseMs: number; now: number },
  ): Promise<Array<Claim | null>> {
    if (claims.length === 0) return [];
    const rows = await db.sql<
      Array<{ id: Int8; action: string; webhook: WebhookRow | null; clock_now: Int8 }>
    >`
      WITH clock AS (
        SELECT coalesce(${clock.param(options.now)}::bigint, (extract(epoch from now()) * 1000)::bigint) AS t
      ), held AS (
        SELECT d.id, d.webhook_id,
          CASE WHEN d.lease_expires_at > (SELECT t FROM clock) AND w.enabled THEN 'renew'
            ELSE 'give back' END AS action
        FROM deliveries d
        JOIN unnest(${claims.map((c) => c.delivery.id)}::bigint[],
                    ${claims.map((c) => c.generation)}::int[],
                    ${claims.map((c) => c.workerId)}::text[]) AS c(id, generation, worker)
          ON d.id = c.id AND d.claim_generation = c.generation AND d.lease_owner = c.worker
        LEFT JOIN webhooks w ON w.id = d.webhook_id
        WHERE d.state = 'delivering'
        FOR UPDATE OF d
      ), changed AS (
        UPDATE deliveries d SET
          lease_expires_at = CASE h.action WHEN 'renew' THEN (SELECT t FROM clock) + ${options.leaseMs}::bigint END,
          state = CASE h.action WHEN 'renew' THEN 'delivering' ELSE 'queued' END,
          attempts = CASE h.action WHEN 'renew' THEN d.attempts ELSE d.attempts - 1 END,
          lease_owner = CASE h.action WHEN 'renew' THEN d.lease_owner END,
          updated_at = CASE h.action WHEN 'renew' THEN d.updated_at ELSE (SELECT t FROM clock) END
        FROM held h
        WHERE d.id = h.id
        RETURNING d.id, d.webhook_id, h.action
      )
      SELECT c.id, c.action, to_jsonb(w.*) AS webhook, (SELECT t FROM clock) AS clock_now,
        CASE WHEN c.action = 'give back' THEN pg_notify(${CHANGE_CHANNEL}, '') END AS notified
      FROM changed c LEFT JOIN webhooks w ON w.id = c.webhook_id`;
    const renewed = new Map<number, WebhookRow>();
    for (const row of rows) {
      if (row.action === "renew" && row.webhook) renewed.set(toNumber(row.id), row.webhook);
    }
    // The new lease's end as the caller's clock reads it.
    const databaseNow = toNumber(rows[0]?.clock_now ?? 0);
    const expires = clock.toCaller(databaseNow + options.leaseMs, databaseNow, options.now);
    return claims.map((claim) => {
      const webhook = renewed.get(claim.delivery.id);
      if (!webhook) return null;
      return {
        ...claim,
        webhook: webhookFromRow(webhook),
        delivery: { ...claim.delivery, leaseExpiresAt: expires },
      };
    });
  };
}
