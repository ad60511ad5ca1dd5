import { z } from "zod";
import {
  FIELD_READERS,
  filterCrossProblems,
  isProblem,
  type Read,
} from "../../webhooks/delivery/delivery-filter.ts";
import { MAX_REPLAY } from "../../webhooks/delivery/replay.ts";
import { DELIVERY_STATES } from "../../webhooks/model.ts";
import { cursorParameter, nextSchema, offsetOrCursor } from "../api/cursor-paging.ts";
import { fieldErrorsSchema, json } from "../api/openapi-parts.ts";
import { limitParameter, offsetParameter, optionalParameter } from "../api/validated-query.ts";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from "../items/item-schemas.ts";

/**
 * The deliveries API's bodies, query and answers as zod schemas: the retry and replay bodies are
 * validated by them, and the document shows them all (deliveries-api.ts).
 */

const state = z.enum(DELIVERY_STATES);
const time = z.iso.datetime({ offset: true });

/** The filter's fields as JSON (retry and replay bodies). */
const filterFields = {
  webhook: z.int().min(1).describe("a webhook's id"),
  event: z.string().describe("an event name, e.g. item.updated"),
  object_model: z.string().describe("the changed object's type, e.g. item"),
  object_id: z.int().min(1).describe("the changed object's id"),
  since: time.describe("queued at or after (ISO 8601)"),
  until: time.describe("queued before (ISO 8601)"),
};

/** A filter field's query parameter: read by the filter's own reader, refused with its words. */
function filterParameter<T>(read: (value: unknown) => Read<T>, description: string) {
  return optionalParameter(
    z.string().transform((value, ctx) => {
      const result = read(value);
      if (!isProblem(result)) return result as T;
      ctx.addIssue({ code: "custom", message: result.problem });
      return z.NEVER;
    }),
  ).describe(description);
}

/** The list's query: the filter (FIELD_READERS, as bodies and the CLI read it) and the page. */
export const listQuery = z
  .strictObject({
    webhook: filterParameter(FIELD_READERS.webhook, "a webhook's id"),
    message_id: filterParameter(
      FIELD_READERS.message_id,
      "the webhook-id header a receiver logged (msg_…): the one delivery that sent it",
    ),
    state: filterParameter(FIELD_READERS.state, `one state: ${DELIVERY_STATES.join(", ")}`),
    states: filterParameter(FIELD_READERS.states, "states, comma-separated; not with state"),
    event: filterParameter(FIELD_READERS.event, "an event name, e.g. item.updated"),
    object_model: filterParameter(
      FIELD_READERS.object_model,
      "the changed object's type, e.g. item",
    ),
    object_id: filterParameter(FIELD_READERS.object_id, "the changed object's id"),
    since: filterParameter(FIELD_READERS.since, "queued at or after, ISO 8601 with its zone"),
    until: filterParameter(
      FIELD_READERS.until,
      "queued before, ISO 8601 with its zone; after since",
    ),
    limit: limitParameter(
      MAX_PAGE_SIZE,
      `a page of this many, 1 to ${MAX_PAGE_SIZE} (${DEFAULT_PAGE_SIZE} when absent)`,
    ),
    offset: offsetParameter,
    cursor: cursorParameter,
  })
  .superRefine((query, ctx) => {
    offsetOrCursor(query, ctx);
    for (const [name, message] of Object.entries(filterCrossProblems(query))) {
      ctx.addIssue({ code: "custom", path: [name], message });
    }
  });

export const deliverySchema = z
  .object({
    id: z.int().min(1),
    webhook_id: z.int().min(1),
    webhook_name: z.string(),
    message_id: z.string().describe("the webhook-id header: the same on every attempt and replay"),
    event: z.string(),
    state,
    attempt_count: z.int().min(0).describe("attempts started so far"),
    object_model: z.string().nullable(),
    object_id: z.int().nullable(),
    url: z
      .string()
      .nullable()
      .describe(
        "the URL rendered at enqueue, when templated; its password as ***, and for a read-only token each query parameter's value too",
      ),
    template_failed: z.boolean(),
    next_attempt_at: time.nullable().describe("when queued: when it is due"),
    last_status: z.int().nullable(),
    last_error: z.string().nullable(),
    payload: z.unknown().describe("the body sent: JSON parsed, other text as a string"),
    created_at: time,
    updated_at: time,
    completed_at: time.nullable(),
  })
  .meta({ id: "Delivery" });

export const attemptSchema = z
  .object({
    number: z.int().min(1),
    time: time.describe("when it started"),
    url: z.string().nullable().describe("the URL tried; masked as the delivery's is"),
    status: z.int().nullable(),
    duration_ms: z.number(),
    outcome: z.string(),
    error: z.string().nullable(),
    worker_id: z.string().nullable(),
    response_headers: z.string().nullable().describe("cut to 4 KiB"),
    response_body: z.string().nullable().describe("cut to 4 KiB"),
  })
  .meta({ id: "Attempt" });

export const deliveryPageSchema = z
  .object({
    deliveries: z.array(deliverySchema),
    total: z.int().min(0),
    limit: z.int().min(1).max(MAX_PAGE_SIZE),
    offset: z.int().min(0),
    next: nextSchema,
  })
  .meta({ id: "DeliveryPage" });

/** By ids: each id not acted on, with why. */
const skippedSchema = z
  .array(
    z.object({
      id: z.int().min(1),
      reason: z.enum(["unknown", "not failed", "already queued", "in flight", "template failed"]),
    }),
  )
  .describe("by ids: each id left as it was, and why");

export const requeuedFields = {
  skipped: skippedSchema.optional(),
  matched: z.int().min(0).describe(`deliveries taken, at most ${MAX_REPLAY}`),
  cut: z.boolean().describe(`more matched than ${MAX_REPLAY}: the oldest were taken`),
  limit: z.literal(MAX_REPLAY),
  next_since: time.nullable().describe("when cut: the since of the next call, for the rest"),
  message: z.string(),
};

export const retrySchema = z
  .union([
    z.strictObject({ ids: z.array(z.int().min(1)).min(1).max(MAX_REPLAY) }),
    z.strictObject(filterFields).partial().meta({ minProperties: 1 }),
  ])
  .meta({ id: "RetryRequest" });
export const replaySchema = z
  .union([
    z.strictObject({ ids: z.array(z.int().min(1)).min(1).max(MAX_REPLAY) }),
    z
      .strictObject({
        ...filterFields,
        states: z
          .array(z.enum(["successful", "failed"]))
          .min(1)
          .describe("default: both"),
      })
      .partial()
      .meta({ minProperties: 1 }),
  ])
  .meta({ id: "ReplayRequest" });

export const invalid = json(
  "A field is refused: fieldErrors names it and says why",
  fieldErrorsSchema,
);

/** The single delivery's answer: the delivery and its attempts. */
export const deliveryDetailSchema = deliverySchema
  .extend({ attempts: z.array(attemptSchema) })
  .meta({ id: "DeliveryDetail" });

export const retriedSchema = z
  .object({ retried: z.int().min(0), ...requeuedFields })
  .meta({ id: "Retried" });

export const replayedSchema = z
  .object({ replayed: z.int().min(0), ...requeuedFields })
  .meta({ id: "Replayed" });
