import type { Database, SQLQueryBindings } from "bun:sqlite";
import type { Claim, Webhook } from "../../../webhooks/model.ts";
import { type WebhookRow, webhookFromRow } from "../webhooks.ts";

/**
 * Re-checks held claims right before they are sent (see DeliveryQueue.renew): each still ours
 * and within its lease gets a new lease and its webhook as it is now; the others are not sent.
 * Runs inside the caller's write transaction; returns how many were given back.
 */
export function createRenew(db: Database) {
  const heldStmt = db.prepare<{ lease_expires_at: number | null }, SQLQueryBindings[]>(
    `SELECT lease_expires_at FROM deliveries
     WHERE id = ?1 AND state = 'delivering' AND claim_generation = ?2 AND lease_owner = ?3`,
  );
  const webhookStmt = db.prepare<WebhookRow, [number]>("SELECT * FROM webhooks WHERE id = ?");
  const extendStmt = db.prepare<unknown, SQLQueryBindings[]>(
    "UPDATE deliveries SET lease_expires_at = ?2 WHERE id = ?1",
  );
  const giveBackStmt = db.prepare<unknown, SQLQueryBindings[]>(
    `UPDATE deliveries SET state = 'queued', attempts = attempts - 1, lease_owner = NULL,
       lease_expires_at = NULL, updated_at = ?2
     WHERE id = ?1`,
  );

  return function renewRows(
    claims: Claim[],
    leaseMs: number,
    at: number,
  ): { claims: Array<Claim | null>; released: number } {
    const webhooks = new Map<number, Webhook | null>();
    const webhookOf = (id: number): Webhook | null => {
      let webhook = webhooks.get(id);
      if (webhook === undefined) {
        const row = webhookStmt.get(id);
        webhook = row ? webhookFromRow(row) : null;
        webhooks.set(id, webhook);
      }
      return webhook;
    };
    let released = 0;
    const renewed = claims.map((claim): Claim | null => {
      const id = claim.delivery.id;
      const held = heldStmt.get(id, claim.generation, claim.workerId);
      if (!held) return null;
      const webhook = webhookOf(claim.webhook.id);
      if (held.lease_expires_at === null || held.lease_expires_at <= at || !webhook?.enabled) {
        // Never sent: queued again with its attempt number unused, as on shutdown.
        giveBackStmt.run(id, at);
        released++;
        return null;
      }
      const expires = at + leaseMs;
      extendStmt.run(id, expires);
      return { ...claim, webhook, delivery: { ...claim.delivery, leaseExpiresAt: expires } };
    });
    return { claims: renewed, released };
  };
}
