import type { StandardSchemaV1 } from "@standard-schema/spec";
import type { Context } from "hono";
import { z } from "zod";
import type { WebhookFields } from "../../webhooks/definition/field-faces.ts";
import { fieldByName } from "../../webhooks/definition/field-table.ts";
import { DEFAULT_GRACE_SECONDS, MAX_GRACE_SECONDS } from "../../webhooks/definition/rotation.ts";
import { nextSchema } from "../api/cursor-paging.ts";
import { fieldProblems } from "../api/json-body.ts";
import { issueField, unknownKeys } from "../api/validated-json.ts";
import type { AppEnv } from "../context.ts";

/**
 * The webhooks API's bodies and answers as zod schemas, built from a table of fields
 * (lib/webhooks/definition/field-table.ts): the requests are validated by them and the
 * document shows them (webhooks-api.ts), so a field added to the table is both.
 */

/** What an empty PATCH is answered with. */
export const NOTHING_TO_CHANGE = "Nothing to change: give at least one field";

/** The bodies and answers of a table of fields (WEBHOOK_FIELDS, or a test's own). */
export function webhookSchemas(fields: WebhookFields) {
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
  // At least one field: an empty PATCH is refused by a rule the document states (minProperties).
  const webhookPatchSchema = z
    .strictObject(fieldSchemas)
    .partial()
    .refine((patch) => Object.keys(patch).length > 0, { message: NOTHING_TO_CHANGE })
    .meta({ id: "WebhookPatch", minProperties: 1 });

  const webhookListSchema = z
    .object({
      webhooks: z.array(webhookSchema),
      total: z.int().min(0).describe("every webhook, whatever the page"),
      next: nextSchema,
    })
    .meta({ id: "WebhookList" });
  return { webhookSchema, createdSchema, newWebhookSchema, webhookPatchSchema, webhookListSchema };
}

export const rotationSchema = z
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

export const rotatedSchema = z
  .object({
    secret: z.string().describe("the new whsec_ secret, in this answer only"),
    previous_valid_until: z.iso
      .datetime()
      .nullable()
      .describe("until when the previous secret signs too; null: no previous secret, or no grace"),
  })
  .meta({ id: "SecretRotated" });

/** What an answer has besides the table's fields: refused in a request, with the reason. */
export const ANSWER_ONLY: ReadonlySet<string> = new Set([
  "id",
  "has_secret",
  "disabled_reason",
  "disabled_at",
  "failing_since",
  "created_at",
  "updated_at",
  "warnings",
]);

/**
 * A body its schema refused, answered as the API always has: 400 naming each field with its
 * problem, in the field rule's words where the rule refuses the value too (validate.ts), else
 * the schema's; an unknown field, or one only answers have, says so; an empty PATCH has nothing
 * to change; a body not an object says that.
 */
export function refuseBySchema(error: string, fields: WebhookFields) {
  return (issues: readonly StandardSchemaV1.Issue[], body: unknown, c: Context<AppEnv>) => {
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      return c.json({ error: "The body must be a JSON object" }, 400);
    }
    const given = body as Record<string, unknown>;
    const problems: Record<string, string> = {};
    for (const issue of issues) {
      for (const key of unknownKeys(issue)) {
        problems[key] = ANSWER_ONLY.has(key) ? "set by the app, not by a request" : "unknown field";
      }
      const name = issueField(issue);
      if (name === null || name in problems) continue;
      if (!(name in given)) {
        problems[name] = "required";
        continue;
      }
      const read = fieldByName(fields, name)?.read(given[name]);
      problems[name] = read && !read.ok ? read.problem : issue.message;
    }
    if (Object.keys(problems).length > 0) return fieldProblems(c, error, problems);
    return c.json({ error: issues[0]?.message ?? error }, 400);
  };
}
