import type { Env, Hono } from "hono";
import { describeRoute, generateSpecs, resolver } from "hono-openapi";
import { z } from "zod";
import { itemFields, itemPatchSchema, newItemSchema } from "../inventory/schemas.ts";
import { VERSION } from "../version.ts";

/**
 * The items API described as OpenAPI 3.1 by hono-openapi, from the zod schemas the routes
 * validate with (lib/inventory/schemas.ts) and the shapes they answer with, declared here as zod
 * too: nothing in the document is written by hand but titles and sentences.
 */

export const OPENAPI_PATH = "/api/openapi.json";
export const MAX_PAGE_SIZE = 500;
export const DEFAULT_PAGE_SIZE = 50;

/** An item as the API answers with it. */
export const itemSchema = z
  .object({
    id: z.int().min(1),
    sku: itemFields.sku,
    name: itemFields.name,
    quantity: itemFields.quantity,
    location: itemFields.location,
    updatedAt: z.iso.datetime().describe("when it last changed (ISO 8601)"),
  })
  .meta({ id: "Item" });

export const itemPageSchema = z
  .object({
    items: z.array(itemSchema),
    total: z.int().min(0),
    limit: z.int().min(1).max(MAX_PAGE_SIZE),
    offset: z.int().min(0),
  })
  .meta({ id: "ItemPage" });

/** Every error: `{error}`, a sentence. */
export const apiErrorSchema = z.object({ error: z.string() }).meta({ id: "Error" });

/** 400 for a body that does not validate, 409 for a taken sku: messages per field (zod's flattened error). */
export const fieldErrorsSchema = apiErrorSchema
  .extend({
    formErrors: z.array(z.string()).optional(),
    fieldErrors: z.record(z.string(), z.array(z.string())),
  })
  .meta({ id: "FieldErrors" });

/** ?limit and ?offset as the list route reads them (absent or empty: the default). */
const pageQuery = {
  limit: z.int().min(1).max(MAX_PAGE_SIZE).default(DEFAULT_PAGE_SIZE),
  offset: z.int().min(0).default(0),
};

function json(description: string, schema: z.ZodType) {
  return { description, content: { "application/json": { schema: resolver(schema) } } };
}

const unauthorized = json(
  "ADMIN_TOKEN is set and the request has no valid bearer token or admin session",
  apiErrorSchema,
);
const throttled = json(
  "Too many wrong tokens from this address; Retry-After says when to try again",
  apiErrorSchema,
);
const notFound = json("No item with this id", apiErrorSchema);
const invalid = json(
  "The body does not validate (fieldErrors per field), or is not JSON ({error} only)",
  fieldErrorsSchema,
);
const duplicateSku = json("Another item has this sku (fieldErrors.sku)", fieldErrorsSchema);
const notJson = json("Content-Type is not application/json", apiErrorSchema);
const tooLarge = json("The body is larger than the app's body limit", apiErrorSchema);
/** A parameter's schema from zod, as the request gives it (input). */
function parameterSchema(schema: z.ZodType): object {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: "input" });
  return rest;
}

const idParameter = {
  name: "id",
  in: "path" as const,
  required: true,
  description: "the item's id",
  schema: parameterSchema(z.int().min(1)),
};

function body(schema: z.ZodType, description: string) {
  return {
    required: true,
    description,
    content: { "application/json": { schema: resolver(schema) } },
  };
}

/** The description of each route of lib/app/items-api.ts, as hono-openapi middleware. */
export const itemRouteDocs = {
  list: describeRoute({
    summary: "List items, newest first",
    parameters: Object.entries(pageQuery).map(([name, schema]) => ({
      name,
      in: "query" as const,
      required: false,
      schema: parameterSchema(schema),
    })),
    responses: {
      200: json("A page of items and how many there are", itemPageSchema),
      400: json("limit or offset is not a whole number in range", apiErrorSchema),
      401: unauthorized,
      429: throttled,
    },
  }),
  create: describeRoute({
    summary: "Create an item; queues its item.created deliveries in the same transaction",
    requestBody: body(newItemSchema, "The new item; unknown fields are refused"),
    responses: {
      201: { ...json("The item created; Location names it", itemSchema) },
      400: invalid,
      401: unauthorized,
      409: duplicateSku,
      413: tooLarge,
      415: notJson,
      429: throttled,
    },
  }),
  get: describeRoute({
    summary: "One item",
    parameters: [idParameter],
    responses: {
      200: json("The item", itemSchema),
      401: unauthorized,
      404: notFound,
      429: throttled,
    },
  }),
  update: describeRoute({
    summary: "Change some of an item's fields; queues item.updated deliveries when one changed",
    parameters: [idParameter],
    requestBody: body(itemPatchSchema, "Any subset of the fields; unknown fields are refused"),
    responses: {
      200: json("The item as it is now", itemSchema),
      400: invalid,
      401: unauthorized,
      404: notFound,
      409: duplicateSku,
      413: tooLarge,
      415: notJson,
      429: throttled,
    },
  }),
  remove: describeRoute({
    summary: "Delete an item; queues its item.deleted deliveries",
    parameters: [idParameter],
    responses: {
      204: { description: "Deleted" },
      401: unauthorized,
      404: notFound,
      429: throttled,
    },
  }),
};

/**
 * The OpenAPI document of `app`'s described routes, generated once (the routes do not change
 * while it runs). The bearer token is the app's ADMIN_TOKEN; without one the API is open.
 */
export function openApiDocument<E extends Env>(
  app: Hono<E>,
  generate: typeof generateSpecs = generateSpecs,
): () => Promise<unknown> {
  let document: Promise<unknown> | undefined;
  // generateSpecs reads only the routes and their middleware, whatever the app's context type.
  const routes = app as unknown as Parameters<typeof generateSpecs>[0];
  return () => {
    document ??= generate(routes, {
      documentation: {
        info: {
          title: "Inventory API",
          version: VERSION,
          description:
            "Items of the inventory app. Every change queues the webhook deliveries it causes in the same transaction. See docs/app.md.",
        },
        components: {
          securitySchemes: {
            adminToken: {
              type: "http",
              scheme: "bearer",
              description: "ADMIN_TOKEN, when the app has one",
            },
          },
        },
        security: [{ adminToken: [] }, {}],
      },
      exclude: [OPENAPI_PATH],
      // The API answers 400 itself (fieldErrors), described per route above.
      defaultValidationErrorResponse: false,
    }).catch((error: unknown) => {
      // Kept only once made: a failed generation is tried again by the next request.
      document = undefined;
      throw error;
    });
    return document;
  };
}
