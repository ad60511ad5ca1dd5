import type { StandardSchemaV1 } from "@standard-schema/spec";
import { type Context, Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { z } from "zod";
import { DuplicateSkuError } from "../../inventory/model.ts";
import { fieldErrorsOf, itemPatchSchema, newItemSchema } from "../../inventory/schemas.ts";
import {
  type ChangeContext,
  createItem,
  deleteItem,
  updateItem,
} from "../../webhooks/events/item-changes.ts";
import type { Store } from "../../webhooks/ports.ts";
import { DEFAULT_BODY_LIMIT_BYTES, jsonBodyLimit } from "../api/json-body.ts";
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
import { validatedQuery } from "../api/validated-query.ts";
import type { AppEnv } from "../context.ts";
import { DEFAULT_PAGE_SIZE, itemPageQuery, itemPageSchema, itemSchema } from "./item-schemas.ts";

export { DEFAULT_BODY_LIMIT_BYTES };

export interface ItemsApiOptions {
  store: Store;
  now?: () => Date;
  bodyLimitBytes?: number;
}

/**
 * The JSON inventory API, mounted at /api/items. Errors are `{error, ...details}`: 400 with
 * zod field errors, 404, 409 duplicate sku, 413 body too large, 415 not JSON. Each route carries
 * its OpenAPI description beside its handler, its body validated by the schema the document
 * shows (/api/openapi.json).
 */
export function createItemsApi(options: ItemsApiOptions): Hono<AppEnv> {
  const { store } = options;
  const now = options.now ?? (() => new Date());
  const limitBytes = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  const api = new Hono<AppEnv>();

  api.use(jsonBodyLimit(limitBytes));

  api.get(
    "/",
    describeRoute({
      summary: "List items, newest first",
      responses: {
        200: json("A page of items and how many there are", itemPageSchema),
        400: json(
          "limit or offset is not a whole number in range (fieldErrors)",
          fieldErrorsSchema,
        ),
        401: unauthorized,
        429: throttled,
      },
    }),
    validatedQuery(itemPageQuery, "Invalid page"),
    async (c) => {
      const query = c.req.valid("query");
      const limit = query.limit ?? DEFAULT_PAGE_SIZE;
      const offset = query.offset ?? 0;
      const [items, total] = await Promise.all([
        store.items.list({ limit, offset }),
        store.items.count(),
      ]);
      return c.json({ items, total, limit, offset });
    },
  );

  api.post(
    "/",
    describeRoute({
      summary: "Create an item; queues its item.created deliveries in the same transaction",
      responses: {
        201: json("The item created; Location names it", itemSchema),
        400: invalid,
        401: unauthorized,
        409: duplicateSku,
        413: tooLarge,
        415: notJson,
        429: throttled,
      },
    }),
    ...validatedJson(newItemSchema, invalidItem),
    async (c) => {
      const body = c.req.valid("json");
      try {
        const { item } = await createItem(store, body, changeContext(c, now));
        c.header("Location", `/api/items/${item.id}`);
        return c.json(item, 201);
      } catch (error) {
        return duplicateSkuResponse(c, error);
      }
    },
  );

  api.get(
    "/:id",
    describeRoute({
      summary: "One item",
      parameters: [idParameter("item")],
      responses: {
        200: json("The item", itemSchema),
        401: unauthorized,
        404: notFoundAnswer,
        429: throttled,
      },
    }),
    async (c) => {
      const id = idParam(c.req.param("id"));
      const item = id === null ? null : await store.items.get(id);
      return item ? c.json(item) : notFound(c);
    },
  );

  api.patch(
    "/:id",
    describeRoute({
      summary: "Change some of an item's fields; queues item.updated deliveries when one changed",
      parameters: [idParameter("item")],
      responses: {
        200: json("The item as it is now", itemSchema),
        400: invalid,
        401: unauthorized,
        404: notFoundAnswer,
        409: duplicateSku,
        413: tooLarge,
        415: notJson,
        429: throttled,
      },
    }),
    ...validatedJson(itemPatchSchema, invalidItem),
    async (c) => {
      const id = idParam(c.req.param("id"));
      if (id === null) return notFound(c);
      const patch = c.req.valid("json");
      try {
        const result = await updateItem(store, id, patch, changeContext(c, now));
        return result ? c.json(result.item) : notFound(c);
      } catch (error) {
        return duplicateSkuResponse(c, error);
      }
    },
  );

  api.delete(
    "/:id",
    describeRoute({
      summary: "Delete an item; queues its item.deleted deliveries",
      parameters: [idParameter("item")],
      responses: {
        204: { description: "Deleted" },
        401: unauthorized,
        404: notFoundAnswer,
        429: throttled,
      },
    }),
    async (c) => {
      const id = idParam(c.req.param("id"));
      const result = id === null ? null : await deleteItem(store, id, changeContext(c, now));
      return result ? c.body(null, 204) : notFound(c);
    },
  );

  return api;
}

export function changeContext(c: Context<AppEnv>, now: () => Date): ChangeContext {
  return { username: c.get("username"), requestId: c.get("requestId"), now: now() };
}

/** A body its schema refused: 400 with the schema's problems per field. */
function invalidItem(
  issues: readonly StandardSchemaV1.Issue[],
  _body: unknown,
  c: Context<AppEnv>,
) {
  const error = new z.ZodError(issues as z.core.$ZodIssue[]);
  return c.json({ error: "Invalid item", ...fieldErrorsOf(error) }, 400);
}

const notFoundAnswer = json("No item with this id", apiErrorSchema);
const invalid = json(
  "The body does not validate (fieldErrors per field), or is not JSON ({error} only)",
  fieldErrorsSchema,
);
const duplicateSku = json("Another item has this sku (fieldErrors.sku)", fieldErrorsSchema);

function duplicateSkuResponse(c: Context<AppEnv>, error: unknown): Response {
  if (error instanceof DuplicateSkuError) {
    return c.json({ error: error.message, fieldErrors: { sku: ["Already taken"] } }, 409);
  }
  throw error;
}

function notFound(c: Context<AppEnv>): Response {
  return c.json({ error: "Item not found" }, 404);
}

/** A positive integer id from the path, or null (which the routes answer with 404). */
export function idParam(value: string | undefined): number | null {
  if (value === undefined || !/^[1-9]\d{0,15}$/.test(value)) return null;
  const id = Number(value);
  return Number.isSafeInteger(id) ? id : null;
}
