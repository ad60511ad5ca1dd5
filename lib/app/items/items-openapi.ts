import { describeRoute } from "hono-openapi";
import { z } from "zod";
import { itemFields, itemPatchSchema, newItemSchema } from "../../inventory/schemas.ts";
import {
  apiErrorSchema,
  body,
  fieldErrorsSchema,
  idParameter as idParameterOf,
  json,
  notJson,
  parameterSchema,
  throttled,
  tooLarge,
  unauthorized,
} from "../api/openapi-parts.ts";

export { OPENAPI_PATH, openApiDocument } from "../api/openapi.ts";
export { apiErrorSchema, fieldErrorsSchema };

/**
 * The items API described as OpenAPI 3.1 by hono-openapi, from the zod schemas the routes
 * validate with (lib/inventory/schemas.ts) and the shapes they answer with, declared here as zod
 * too: nothing in the document is written by hand but titles and sentences.
 */

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

/** ?limit and ?offset as the list route reads them (absent or empty: the default). */
const pageQuery = {
  limit: z.int().min(1).max(MAX_PAGE_SIZE).default(DEFAULT_PAGE_SIZE),
  offset: z.int().min(0).default(0),
};

const idParameter = idParameterOf("item");
const notFound = json("No item with this id", apiErrorSchema);
const invalid = json(
  "The body does not validate (fieldErrors per field), or is not JSON ({error} only)",
  fieldErrorsSchema,
);
const duplicateSku = json("Another item has this sku (fieldErrors.sku)", fieldErrorsSchema);
/** The description of each route of lib/app/items/items-api.ts, as hono-openapi middleware. */
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
