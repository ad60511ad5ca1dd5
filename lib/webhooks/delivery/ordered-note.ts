import type { Delivery } from "../model.ts";
import type { DeliveryQueue } from "../ports.ts";

/** How many later deliveries the note counts before it says "or more". */
const COUNTED = 100;

/**
 * What the page of a failed ordered delivery says: the object's later changes to the same
 * webhook went (or will go) on without it, so the receiver's state may lack this change. Null
 * for any other delivery. Shared by the admin page and `webhooks show`.
 */
export async function orderedFailureNote(
  queue: Pick<DeliveryQueue, "list">,
  delivery: Delivery,
): Promise<string | null> {
  const { ordered, state, objectModel, objectId } = delivery;
  if (!ordered || state !== "failed" || objectModel === null || objectId === null) return null;
  const newest = await queue.list({
    object: { model: objectModel, id: objectId },
    webhookId: delivery.webhookId,
    limit: COUNTED,
  });
  const later = newest.filter((d) => d.id > delivery.id).length;
  const object = `${objectModel} ${objectId}`;
  if (later === 0) {
    return `Ordered webhook: changes of ${object} queued after this one will go on without it.`;
  }
  const count = later >= COUNTED ? `${COUNTED} or more` : String(later);
  const changes = later === 1 ? "change" : "changes";
  const go = later === 1 ? "goes" : "go";
  return `Ordered webhook: ${count} later ${changes} of ${object} ${go} on without this one; the receiver may lack this change.`;
}
