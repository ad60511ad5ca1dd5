import { type Context, Hono } from "hono";
import type { z } from "zod";
import { DuplicateSkuError } from "../../inventory/model.ts";
import { fieldErrorsOf, itemPatchSchema, newItemSchema } from "../../inventory/schemas.ts";
import {
  type ChangeContext,
  createItem,
  deleteItem,
  updateItem,
} from "../../webhooks/events/item-changes.ts";
import type { Store } from "../../webhooks/ports.ts";
import { DEFAULT_BODY_LIMIT_BYTES, jsonBodyLimit, readJsonBody } from "../api/json-body.ts";
import type { AppEnv } from "../context.ts";
import { DEFAULT_PAGE_SIZE, itemRouteDocs, MAX_PAGE_SIZE } from "./items-openapi.ts";

export { DEFAULT_BODY_LIMIT_BYTES };

export interface ItemsApiOptions {
  store: Store;
  now?: () => Date;
  bodyLimitBytes?: number;
}

/**
 * The JSON inventory API, mounted at /api/items. Errors are `{error, ...details}`: 400 with
 * zod field errors, 404, 409 duplicate sku, 413 body too large, 415 not JSON. Each route carries
 * its OpenAPI description (items-openapi.ts), served at /api/openapi.json.
 */
export function createItemsApi(options: ItemsApiOptions): Hono<AppEnv> {
  const { store } = options;
  const now = options.now ?? (() => new Date());
  const limitBytes = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  const api = new Hono<AppEnv>();

  api.use(jsonBodyLimit(limitBytes));

  api.get("/", itemRouteDocs.list, async (c) => {
    const limit = wholeNumber(c.req.query("limit"), {
      fallback: DEFAULT_PAGE_SIZE,
      min: 1,
      max: MAX_PAGE_SIZE,
    });
    const offset = wholeNumber(c.req.query("offset"), { fallback: 0, min: 0, max: 1e12 });
    if (limit === null || offset === null) {
      return c.json(
        { error: `limit must be a whole number from 1 to ${MAX_PAGE_SIZE}, offset 0 or more` },
        400,
      );
    }
    const [items, total] = await Promise.all([
      store.items.list({ limit, offset }),
      store.items.count(),
    ]);
    return c.json({ items, total, limit, offset });
  });

  api.post("/", itemRouteDocs.create, async (c) => {
    const body = await readJson(c, newItemSchema);
    if (body instanceof Response) return body;
    try {
      const { item } = await createItem(store, body, changeContext(c, now));
      c.header("Location", `/api/items/${item.id}`);
      return c.json(item, 201);
    } catch (error) {
      return duplicateSkuResponse(c, error);
    }
  });

  api.get("/:id", itemRouteDocs.get, async (c) => {
    const id = idParam(c.req.param("id"));
    const item = id === null ? null : await store.items.get(id);
    return item ? c.json(item) : notFound(c);
  });

  api.patch("/:id", itemRouteDocs.update, async (c) => {
    const id = idParam(c.req.param("id"));
    if (id === null) return notFound(c);
    const patch = await readJson(c, itemPatchSchema);
    if (patch instanceof Response) return patch;
    try {
      const result = await updateItem(store, id, patch, changeContext(c, now));
      return result ? c.json(result.item) : notFound(c);
    } catch (error) {
      return duplicateSkuResponse(c, error);
    }
  });

  api.delete("/:id", itemRouteDocs.remove, async (c) => {
    const id = idParam(c.req.param("id"));
    const result = id === null ? null : await deleteItem(store, id, changeContext(c, now));
    return result ? c.body(null, 204) : notFound(c);
  });

  return api;
}

export function changeContext(c: Context<AppEnv>, now: () => Date): ChangeContext {
  return { username: c.get("username"), requestId: c.get("requestId"), now: now() };
}

/** The validated body, or the 415/400 response to send instead. */
async function readJson<S extends z.ZodType>(
  c: Context<AppEnv>,
  schema: S,
): Promise<z.output<S> | Response> {
  const raw = await readJsonBody(c);
  if (raw instanceof Response) return raw;
  const result = schema.safeParse(raw);
  if (!result.success) {
    return c.json({ error: "Invalid item", ...fieldErrorsOf(result.error) }, 400);
  }
  return result.data;
}

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

export function wholeNumber(
  value: string | undefined,
  range: { fallback: number; min: number; max: number },
): number | null {
  if (value === undefined || value === "") return range.fallback;
  if (!/^\d{1,13}$/.test(value)) return null;
  const n = Number(value);
  return n >= range.min && n <= range.max ? n : null;
}
