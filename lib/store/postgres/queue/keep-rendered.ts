import type { Claim, RenderedDelivery } from "../../../webhooks/model.ts";
import type { Db } from "../db.ts";

/**
 * What a worker rendered for a delivery left to render (render_pending), kept before its send so
 * every attempt sends the same bytes, fenced by the claim (as SQLite's keep-rendered.ts).
 */
export function createKeepRendered(db: Db) {
  return async (claim: Claim, rendered: RenderedDelivery): Promise<boolean> => {
    const { delivery } = claim;
    const headers = rendered.headers === null ? null : JSON.stringify(rendered.headers);
    const rows = await db.sql<Array<{ id: unknown }>>`
      UPDATE deliveries SET payload = ${rendered.payload}, url = ${rendered.url},
        headers = ${headers}::jsonb, context = ${rendered.context}, render_pending = FALSE
      WHERE id = ${delivery.id} AND message_id = ${delivery.messageId}
        AND state = 'delivering' AND lease_owner = ${claim.workerId}
        AND claim_generation = ${claim.generation} AND render_pending
      RETURNING id`;
    return rows.length > 0;
  };
}
