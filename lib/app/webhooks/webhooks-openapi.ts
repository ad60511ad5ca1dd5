import { describeRoute } from "hono-openapi";
import { z } from "zod";
import type { WebhookFields } from "../../webhooks/definition/field-faces.ts";
import { WEBHOOK_FIELDS } from "../../webhooks/definition/field-table.ts";
import { DEFAULT_GRACE_SECONDS, MAX_GRACE_SECONDS } from "../../webhooks/definition/rotation.ts";
import {
  apiErrorSchema,
  body,
  fieldErrorsSchema,
  idParameter,
  json,
  notJson,
  throttled,
  tooLarge,
  unauthorized,
} from "../api/openapi-parts.ts";

/**
 * The webhooks API (webhooks-api.ts) described as OpenAPI 3.1: its bodies and answers are built
 * from the field table (lib/webhooks/definition/field-table.ts), so a field added there is documented here.
 */

/** The bodies and answers of a table of fields (WEBHOOK_FIELDS, or a test's own). */
function webhookSchemas(fields: WebhookFields) {
  const fieldSchemas = Object.fromEntries(fields.map((f) => [f.name, f.schema]));
  const shownSchemas = Object.fromEntries(
    fields.filter((f) => f.name !== "secret").map((f) => [f.name, f.schema]),
  );
  /** A webhook as the API answers with it; never its secret. */
  const webhookSchema = z
    .object({
      id: z.int().min(1),
      ...shownSchemas,
      has_secret: z.boolean().describe("whether requests are signed"),
      previous_secret_valid_until: z.iso
        .datetime()
        .nullable()
        .describe("after a rotation: until when the previous secret signs too"),
      disabled_reason: z.string().nullable(),
      disabled_at: z.iso.datetime().nullable(),
      failing_since: z.iso.datetime().nullable().describe("start of the current failure streak"),
      created_at: z.iso.datetime(),
      updated_at: z.iso.datetime(),
      warnings: z
        .array(z.string())
        .optional()
        .describe("after a save: why workers will refuse the URL (it is saved all the same)"),
    })
    .meta({ id: "Webhook" });

  const createdSchema = webhookSchema
    .extend({
      secret: z
        .string()
        .optional()
        .describe("the generated signing secret, in this answer only; absent when one was given"),
    })
    .meta({ id: "WebhookCreated" });

  const newWebhookSchema = z
    .strictObject(fieldSchemas)
    .partial()
    .required({ name: true, url: true })
    .meta({ id: "NewWebhook" });
  const webhookPatchSchema = z.strictObject(fieldSchemas).partial().meta({ id: "WebhookPatch" });

  const webhookListSchema = z
    .object({ webhooks: z.array(webhookSchema), total: z.int().min(0) })
    .meta({ id: "WebhookList" });
  return { webhookSchema, createdSchema, newWebhookSchema, webhookPatchSchema, webhookListSchema };
}

const rotationSchema = z
  .strictObject({
    grace_seconds: z
      .int()
      .min(0)
      .max(MAX_GRACE_SECONDS)
      .optional()
      .describe(
        `how long the previous secret keeps signing; 0: not at all; default ${DEFAULT_GRACE_SECONDS}`,
      ),
  })
  .meta({ id: "SecretRotation" });

const rotatedSchema = z
  .object({
    secret: z.string().describe("the new whsec_ secret, in this answer only"),
    previous_valid_until: z.iso
      .datetime()
      .nullable()
      .describe("until when the previous secret signs too; null: no previous secret, or no grace"),
  })
  .meta({ id: "SecretRotated" });

const notFound = json("No webhook with this id", apiErrorSchema);
const invalid = json(
  "A field is refused (fieldErrors names it and says why), or the body is not a JSON object",
  fieldErrorsSchema,
);
const duplicateName = json("Another webhook has this name (fieldErrors.name)", fieldErrorsSchema);

/** The webhooks API's routes described, by the table of fields it reads. */
export function webhookRouteDocs(fields: WebhookFields = WEBHOOK_FIELDS) {
  const { webhookSchema, createdSchema, newWebhookSchema, webhookPatchSchema, webhookListSchema } =
    webhookSchemas(fields);
  return {
    list: describeRoute({
      summary: "List webhooks",
      tags: ["webhooks"],
      responses: {
        200: json("Every webhook", webhookListSchema),
        401: unauthorized,
        429: throttled,
      },
    }),
    create: describeRoute({
      summary: "Create a webhook; a secret is generated unless one is given, and shown only here",
      tags: ["webhooks"],
      requestBody: body(
        newWebhookSchema,
        "name and url, and any other field; unknown fields are refused",
      ),
      responses: {
        201: json("The webhook created; Location names it", createdSchema),
        400: invalid,
        401: unauthorized,
        409: duplicateName,
        413: tooLarge,
        415: notJson,
        429: throttled,
      },
    }),
    get: describeRoute({
      summary: "One webhook",
      tags: ["webhooks"],
      parameters: [idParameter("webhook")],
      responses: {
        200: json("The webhook", webhookSchema),
        401: unauthorized,
        404: notFound,
        429: throttled,
      },
    }),
    update: describeRoute({
      summary: "Change some of a webhook's fields; the others keep their values",
      tags: ["webhooks"],
      parameters: [idParameter("webhook")],
      requestBody: body(
        webhookPatchSchema,
        "Any subset of the fields; null clears an optional one",
      ),
      responses: {
        200: json("The webhook as it is now", webhookSchema),
        400: invalid,
        401: unauthorized,
        404: notFound,
        409: duplicateName,
        413: tooLarge,
        415: notJson,
        429: throttled,
      },
    }),
    rotateSecret: describeRoute({
      summary:
        "A new signing secret; the previous one signs too (both in webhook-signature) for a grace period",
      tags: ["webhooks"],
      parameters: [idParameter("webhook")],
      requestBody: body(rotationSchema, "Optional: the grace period; no body: 24 hours"),
      responses: {
        200: json("The new secret, shown only here", rotatedSchema),
        400: invalid,
        401: unauthorized,
        404: notFound,
        413: tooLarge,
        415: notJson,
        429: throttled,
      },
    }),
    remove: describeRoute({
      summary: "Delete a webhook and its deliveries",
      tags: ["webhooks"],
      parameters: [idParameter("webhook")],
      responses: {
        204: { description: "Deleted" },
        401: unauthorized,
        404: notFound,
        429: throttled,
      },
    }),
  };
}
