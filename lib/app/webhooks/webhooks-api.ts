import { type Context, Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { z } from "zod";
import type { WebhookFields } from "../../webhooks/definition/field-faces.ts";
import {
  fieldByKey,
  readWebhookFields,
  WEBHOOK_FIELDS,
  webhookFieldsJson,
} from "../../webhooks/definition/field-table.ts";
import { rotateSecret } from "../../webhooks/definition/rotation.ts";
import { type SaveRefusal, saveWebhook } from "../../webhooks/definition/save.ts";
import { DuplicateWebhookNameError, WebhookNotFoundError } from "../../webhooks/errors.ts";
import type { Webhook, WebhookPatch } from "../../webhooks/model.ts";
import type { Store } from "../../webhooks/ports.ts";
import {
  cursorParameter,
  linkHeader,
  offsetOrCursor,
  pageOf,
  setNextLink,
} from "../api/cursor-paging.ts";
import { fieldProblems, jsonBodyLimit } from "../api/json-body.ts";
import {
  apiErrorSchema,
  fieldErrorsSchema,
  idParameter,
  json,
  notJson,
  throttled,
  tooLarge,
  unauthorized,
} from "../api/openapi-parts.ts";
import { validatedJson } from "../api/validated-json.ts";
import { limitParameter, offsetParameter, validatedQuery } from "../api/validated-query.ts";
import type { AppEnv } from "../context.ts";
import { MAX_PAGE_SIZE } from "../items/item-schemas.ts";
import { idParam } from "../items/items-api.ts";
import {
  refuseBySchema,
  rotatedSchema,
  rotationSchema,
  webhookSchemas,
} from "./webhook-schemas.ts";

export interface WebhooksApiOptions {
  store: Store;
  bodyLimitBytes: number;
  generateSecret: () => string;
  /** The app's clock: when a rotation's grace period ends. */
  now: () => Date;
  /** Why workers will refuse a URL (WEBHOOK_ALLOWED_HOSTS, the SSRF guard), or null. */
  urlWarning?: (url: string) => Promise<string | null>;
  /** The webhook fields (default WEBHOOK_FIELDS; a test's table adds its own). */
  fields?: WebhookFields;
}

/**
 * /api/webhooks: list, create, read, change and delete webhooks as JSON, by the one field table
 * (lib/webhooks/definition/field-table.ts, over the rules the CLI and the admin form use). A secret is
 * answered once, when POST generates it; it is never shown again. A URL's password is answered
 * as `***`, which a PATCH may send back to keep it.
 */
export function createWebhooksApi(options: WebhooksApiOptions): Hono<AppEnv> {
  const fields = options.fields ?? WEBHOOK_FIELDS;
  const api = new Hono<AppEnv>();
  api.use(jsonBodyLimit(options.bodyLimitBytes));
  const routes: WebhookRoutes = {
    api,
    options,
    fields,
    schemas: webhookSchemas(fields),
    webhookJson: (webhook, masked = false) => webhookAnswer(webhook, { masked, fields }),
  };
  readRoutes(routes);
  saveRoutes(routes);
  rotateRoute(routes);
  return api;
}

/** What the webhooks API's route groups share. */
interface WebhookRoutes {
  api: Hono<AppEnv>;
  options: WebhooksApiOptions;
  fields: WebhookFields;
  schemas: ReturnType<typeof webhookSchemas>;
  webhookJson(webhook: Webhook, masked?: boolean): ReturnType<typeof webhookAnswer>;
}

/** List, read, delete. */
function readRoutes(routes: WebhookRoutes): void {
  const { api, schemas, webhookJson } = routes;
  const { store } = routes.options;
  api.get(
    "/",
    describeRoute({
      summary: "List webhooks, by id; all of them, or a page with limit",
      tags: ["webhooks"],
      responses: {
        200: {
          ...json(
            "The webhooks (a page of them with limit), and the next page's cursor",
            schemas.webhookListSchema,
          ),
          headers: linkHeader,
        },
        400: invalid,
        401: unauthorized,
        429: throttled,
      },
    }),
    validatedQuery(listQuery, "Invalid page"),
    async (c) => {
      const page = c.req.valid("query");
      const webhooks = await store.webhooks.list();
      // Keyset on id (ids are never reused), then the offset, if any.
      const from = webhooks.filter((w) => w.id > (page.cursor ?? 0)).slice(page.offset ?? 0);
      const shown =
        page.limit === undefined ? { rows: from, next: null } : pageOf(from, page.limit);
      setNextLink(c, shown.next);
      const masked = c.get("readOnly");
      return c.json({
        webhooks: shown.rows.map((w) => webhookJson(w, masked)),
        total: webhooks.length,
        next: shown.next,
      });
    },
  );

  api.get(
    "/:id",
    describeRoute({
      summary: "One webhook",
      tags: ["webhooks"],
      parameters: [idParameter("webhook")],
      responses: {
        200: json("The webhook", schemas.webhookSchema),
        401: unauthorized,
        404: notFound,
        429: throttled,
      },
    }),
    async (c) => {
      const id = idParam(c.req.param("id"));
      const webhook = id === null ? null : await store.webhooks.get(id);
      return webhook ? c.json(webhookJson(webhook, c.get("readOnly"))) : webhookNotFound(c);
    },
  );

  api.delete(
    "/:id",
    describeRoute({
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
    async (c) => {
      const id = idParam(c.req.param("id"));
      const removed = id === null ? false : await store.webhooks.remove(id);
      return removed ? c.body(null, 204) : webhookNotFound(c);
    },
  );
}

/** Create and change: the body validated by its schema, then the field rules, then saveWebhook. */
function saveRoutes(routes: WebhookRoutes): void {
  const { api, options, fields, schemas, webhookJson } = routes;
  const { store } = options;
  const invalidWebhook = refuseBySchema("Invalid webhook", fields);
  api.post(
    "/",
    describeRoute({
      summary: "Create a webhook; a secret is generated unless one is given, and shown only here",
      tags: ["webhooks"],
      responses: {
        201: json("The webhook created; Location names it", schemas.createdSchema),
        400: invalid,
        401: unauthorized,
        409: duplicateName,
        413: tooLarge,
        415: notJson,
        429: throttled,
      },
    }),
    ...validatedJson(schemas.newWebhookSchema, invalidWebhook),
    async (c) => {
      const read = readWebhookFields(c.req.valid("json"), { fields });
      if (!read.ok) return fieldProblems(c, "Invalid webhook", read.problems);
      const generate = read.patch.secret === undefined;
      try {
        const saved = await saveWebhook(store.webhooks, {
          before: null,
          fields: read.patch,
          generateSecret: options.generateSecret,
        });
        if (!saved.ok) return refusedOnSave(c, saved.refused, fields);
        const { webhook } = saved;
        c.header("Location", `/api/webhooks/${webhook.id}`);
        const answer = { ...webhookJson(webhook), ...(generate ? { secret: webhook.secret } : {}) };
        return c.json({ ...answer, ...(await warnings(options, webhook.url)) }, 201);
      } catch (error) {
        return duplicateNameResponse(c, error);
      }
    },
  );

  api.patch(
    "/:id",
    describeRoute({
      summary: "Change some of a webhook's fields; the others keep their values",
      tags: ["webhooks"],
      parameters: [idParameter("webhook")],
      responses: {
        200: json("The webhook as it is now", schemas.webhookSchema),
        400: invalid,
        401: unauthorized,
        404: notFound,
        409: duplicateName,
        413: tooLarge,
        415: notJson,
        429: throttled,
      },
    }),
    ...validatedJson(schemas.webhookPatchSchema, invalidWebhook),
    async (c) => {
      const id = idParam(c.req.param("id"));
      const before = id === null ? null : await store.webhooks.get(id);
      if (id === null || before === null) return webhookNotFound(c);
      const read = readWebhookFields(c.req.valid("json"), { fields });
      if (!read.ok) return fieldProblems(c, "Invalid webhook", read.problems);
      const patch: WebhookPatch = read.patch;
      if (patch.enabled === false && before.enabled)
        patch.disabledReason = "disabled through the API";
      try {
        const saved = await saveWebhook(store.webhooks, { before, fields: patch });
        if (!saved.ok) return refusedOnSave(c, saved.refused, fields);
        const updated = saved.webhook;
        const warned = patch.url === undefined ? {} : await warnings(options, updated.url);
        return c.json({ ...webhookJson(updated), ...warned });
      } catch (error) {
        if (error instanceof WebhookNotFoundError) return webhookNotFound(c);
        return duplicateNameResponse(c, error);
      }
    },
  );
}

/** A new signing secret, the previous one signing beside it for a grace period. */
function rotateRoute(routes: WebhookRoutes): void {
  const { api, options } = routes;
  const { store } = options;
  api.post(
    "/:id/rotate-secret",
    describeRoute({
      summary:
        "A new signing secret; the previous one signs too (both in webhook-signature) for a grace period",
      tags: ["webhooks"],
      parameters: [idParameter("webhook")],
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
    // No body at all is the default grace; a body is a JSON object with grace_seconds only.
    ...validatedJson(rotationSchema, refuseBySchema("Invalid rotation", []), { optional: true }),
    async (c) => {
      const id = idParam(c.req.param("id"));
      if (id === null) return webhookNotFound(c);
      const grace = c.req.valid("json").grace_seconds;
      const rotated = await rotateSecret(store.webhooks, id, {
        graceSeconds: grace,
        now: options.now().getTime(),
        generateSecret: options.generateSecret,
      });
      if (rotated === null) return webhookNotFound(c);
      return c.json({
        secret: rotated.secret,
        previous_valid_until: isoOrNull(rotated.previousValidUntil),
      });
    },
  );
}

/**
 * A webhook as the API answers with it: the table's fields and what the app keeps about it;
 * `masked` for a read-only token (credentials as ***).
 */
export function webhookAnswer(
  webhook: Webhook,
  options: { masked?: boolean; fields?: WebhookFields } = {},
) {
  return {
    id: webhook.id,
    ...webhookFieldsJson(webhook, options),
    has_secret: webhook.secret !== null,
    previous_secret_valid_until: isoOrNull(
      webhook.previousSecret === null ? null : webhook.previousSecretUntil,
    ),
    disabled_reason: webhook.disabledReason,
    disabled_at: isoOrNull(webhook.disabledAt),
    failing_since: isoOrNull(webhook.failingSince ?? null),
    created_at: new Date(webhook.createdAt).toISOString(),
    updated_at: new Date(webhook.updatedAt).toISOString(),
  };
}

export function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

/** A save's refusal (save.ts) as the field problem of a 400, by the field's JSON name. */
function refusedOnSave(c: Context<AppEnv>, refusal: SaveRefusal, fields: WebhookFields): Response {
  const name = fieldByKey(fields, refusal.key)?.name ?? refusal.key;
  return fieldProblems(c, "Invalid webhook", { [name]: refusal.problem });
}

async function warnings(
  options: WebhooksApiOptions,
  url: string,
): Promise<{ warnings?: string[] }> {
  const warning = options.urlWarning ? await options.urlWarning(url) : null;
  return warning === null ? {} : { warnings: [warning] };
}

function duplicateNameResponse(c: Context<AppEnv>, error: unknown): Response {
  if (error instanceof DuplicateWebhookNameError) {
    return c.json({ error: error.message, fieldErrors: { name: ["Already taken"] } }, 409);
  }
  throw error;
}

/** The list's query: without limit every webhook, as before paging. */
const listQuery = z
  .object({
    limit: limitParameter(
      MAX_PAGE_SIZE,
      `a page of this many, 1 to ${MAX_PAGE_SIZE}; without it, every webhook`,
    ),
    offset: offsetParameter,
    cursor: cursorParameter,
  })
  .superRefine(offsetOrCursor);

const notFound = json("No webhook with this id", apiErrorSchema);
const invalid = json(
  "A field is refused (fieldErrors names it and says why), or the body is not a JSON object",
  fieldErrorsSchema,
);
const duplicateName = json("Another webhook has this name (fieldErrors.name)", fieldErrorsSchema);

function webhookNotFound(c: Context<AppEnv>): Response {
  return c.json({ error: "Webhook not found" }, 404);
}
