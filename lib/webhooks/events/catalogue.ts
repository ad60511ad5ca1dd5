import { z } from "zod";
import { storedItemFields } from "../../inventory/schemas.ts";

/**
 * The event catalogue: every event a webhook can receive, with a one-line description and the
 * zod schema of the JSON body we send for it (NetBox's default body, payload.ts, when the
 * webhook has no body template). /api/openapi.json publishes it as OpenAPI 3.1's `webhooks`,
 * and tests validate real payloads against it, so it cannot drift from what is sent. An event
 * is added here with one entry.
 */

export interface CatalogueEvent {
  description: string;
  /** The body as sent. */
  schema: z.ZodType;
}

/** An item as the change snapshots it (lib/inventory/model.ts's Item). */
const itemSnapshot = z.strictObject(storedItemFields);

/** Python's `isoformat(" ")` in UTC, as NetBox sends: `2021-03-09 17:55:33.968016+00:00`. */
const netboxTimestamp = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{6}\+00:00$/)
  .describe("when the change happened, NetBox's format: 2021-03-09 17:55:33.968016+00:00");

/** NetBox's body of a change to an item: `event` is the action, `model` the object type. */
function itemChangeBody(
  action: "created" | "updated" | "deleted",
  snapshots: { prechange: z.ZodType; postchange: z.ZodType },
) {
  return z.strictObject({
    event: z.literal(action),
    timestamp: netboxTimestamp,
    model: z.literal("item"),
    username: z
      .string()
      .describe(
        "who made the change: admin, token:NAME (an API token), or anonymous without ADMIN_TOKEN",
      ),
    request_id: z.string().describe("the X-Request-Id of the request that made the change"),
    data: itemSnapshot.describe("the item: after the change, or as it was when deleted"),
    snapshots: z.strictObject(snapshots),
  });
}

/**
 * An operational event's body (operational-events.ts): NetBox's shape, sent by a worker, about
 * a webhook or a delivery rather than an item; there are no snapshots.
 */
function operationalBody(
  action: "disabled" | "exhausted" | "failing" | "recovered",
  model: string,
  data: z.ZodType,
) {
  return z.strictObject({
    event: z.literal(action),
    timestamp: netboxTimestamp.describe("when it happened, NetBox's format"),
    model: z.literal(model),
    username: z.literal("worker"),
    request_id: z.string().describe("a fresh UUID for each event"),
    data,
    snapshots: z.strictObject({ prechange: z.null(), postchange: z.null() }),
  });
}

const webhookDisabled = z.strictObject({
  id: z.int().min(1).describe("the webhook disabled"),
  name: z.string(),
  url: z.string(),
  reason: z.string().describe("the reason stored and shown, e.g. Disabled automatically: …"),
  reason_kind: z
    .enum(["gone", "failing", "manual"])
    .describe("a 410 Gone answer, a failure streak, or by hand (admin, CLI, API)"),
  disabled_at: z.iso.datetime(),
});

const deliveryExhausted = z.strictObject({
  id: z.int().min(1).describe("the delivery that ended failed"),
  message_id: z.string().describe("its webhook-id header"),
  event: z.string().describe("its event, e.g. item.updated"),
  webhook_id: z.int().min(1),
  webhook_name: z.string(),
  attempts: z.int().min(1).describe("attempts made"),
  last_status: z.int().nullable().describe("the last answer's HTTP status; null without one"),
  last_error: z
    .string()
    .nullable()
    .describe("the last attempt's error line (up to 1000 characters)"),
  object_model: z.string().nullable(),
  object_id: z.int().nullable(),
});

const webhookFailing = z.strictObject({
  id: z.int().min(1).describe("the webhook whose attempts are failing"),
  name: z.string(),
  url: z.string().describe("its URL, a password in it shown as ***"),
  failing_notice_after: z
    .int()
    .min(1)
    .describe("the webhook's setting: the failed attempt of a delivery that announces this"),
  delivery_id: z.int().min(1).describe("the delivery whose failed attempt it was"),
  message_id: z.string().describe("its webhook-id header"),
  event: z.string().describe("its event, e.g. item.updated"),
  attempt: z.int().min(1).describe("the attempt that failed"),
  last_status: z.int().nullable().describe("its HTTP status; null without an answer"),
  last_error: z.string().nullable().describe("its error line (up to 1000 characters)"),
  next_attempt_at: z.iso
    .datetime()
    .nullable()
    .describe("when that delivery is tried again; null when it will not be (it ended failed)"),
});

const webhookRecovered = z.strictObject({
  id: z.int().min(1).describe("the webhook that recovered"),
  name: z.string(),
  failing_noticed_at: z.iso.datetime().describe("when its webhook.failing was announced"),
  delivery_id: z.int().min(1).describe("the delivery whose attempt succeeded"),
  message_id: z.string().describe("its webhook-id header"),
});

export const EVENT_CATALOGUE: Readonly<Record<string, CatalogueEvent>> = {
  "item.created": {
    description: "An item was created; prechange is null.",
    schema: itemChangeBody("created", { prechange: z.null(), postchange: itemSnapshot }),
  },
  "item.updated": {
    description: "An item's fields changed; the snapshots hold it before and after.",
    schema: itemChangeBody("updated", { prechange: itemSnapshot, postchange: itemSnapshot }),
  },
  "item.deleted": {
    description: "An item was deleted; postchange is null.",
    schema: itemChangeBody("deleted", { prechange: itemSnapshot, postchange: z.null() }),
  },
  "webhook.disabled": {
    description:
      'Operational: a webhook was disabled, automatically (410 Gone, or a failure streak) or by hand. Sent to the other webhooks that name this event, never to the one disabled; "*" does not include it.',
    schema: operationalBody("disabled", "webhook", webhookDisabled),
  },
  "delivery.exhausted": {
    description:
      'Operational: a delivery ended failed after its last attempt (retries ran out, or a 410). Sent to the other webhooks that name this event; a delivery of an operational event announces nothing. "*" does not include it.',
    schema: operationalBody("exhausted", "delivery", deliveryExhausted),
  },
  "webhook.failing": {
    description:
      "Operational: a webhook's attempts are failing: a delivery's failed attempt was the webhook's failing_notice_after-th (the fourth by default, as Svix's message.attempt.failing). Once per failing run, until webhook.recovered. Sent to the other webhooks that name this event, never to the one failing; \"*\" does not include it.",
    schema: operationalBody("failing", "webhook", webhookFailing),
  },
  "webhook.recovered": {
    description:
      'Operational: the first successful attempt to a webhook after its webhook.failing. Sent to the other webhooks that name this event, never to the one recovered; "*" does not include it.',
    schema: operationalBody("recovered", "webhook", webhookRecovered),
  },
};

/** An event's body as JSON Schema (draft 2020-12, OpenAPI 3.1's dialect), references inlined. */
export function eventJsonSchema(event: CatalogueEvent): Record<string, unknown> {
  const { $schema: _dialect, ...schema } = z.toJSONSchema(event.schema, {
    io: "output",
    reused: "inline",
  }) as Record<string, unknown>;
  return schema;
}
