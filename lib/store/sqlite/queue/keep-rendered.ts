import type { Database } from "bun:sqlite";
import type { Claim, RenderedDelivery } from "../../../webhooks/model.ts";
import type { AvailabilityWatch } from "./availability.ts";

/**
 * What a worker rendered for a delivery left to render (render_pending), kept before its send so
 * every attempt sends the same bytes: its payload, URL, headers and context, fenced by the claim
 * (a delivery taken over or removed meanwhile gets nothing). Through the availability watch,
 * as every worker write is.
 */
export function createKeepRendered(db: Database, availability: Pick<AvailabilityWatch, "write">) {
  const renderedStmt = db.prepare<
    unknown,
    [string | null, string | null, string | null, number, string, string, number]
  >(
    `UPDATE deliveries SET url = ?1, headers = ?2, context = ?3, render_pending = 0
     WHERE id = ?4 AND message_id = ?5 AND state = 'delivering' AND lease_owner = ?6
       AND claim_generation = ?7 AND render_pending = 1`,
  );
  const payloadStmt = db.prepare<unknown, [string, number]>(
    "UPDATE delivery_payloads SET payload = ?1 WHERE delivery_id = ?2",
  );
  const keep = db.transaction((claim: Claim, rendered: RenderedDelivery): boolean => {
    const { delivery } = claim;
    const headers = rendered.headers === null ? null : JSON.stringify(rendered.headers);
    const changed = renderedStmt.run(
      rendered.url,
      headers,
      rendered.context,
      delivery.id,
      delivery.messageId,
      claim.workerId,
      claim.generation,
    );
    if (changed.changes === 0) return false;
    payloadStmt.run(rendered.payload, delivery.id);
    return true;
  });
  // A worker's write like its results: one that failed or waited through an outage is seen.
  return async (claim: Claim, rendered: RenderedDelivery): Promise<boolean> =>
    availability.write(() => keep.immediate(claim, rendered));
}
