import { z } from "zod";
import { storedItemFields } from "../../inventory/schemas.ts";
import { apiErrorSchema, fieldErrorsSchema } from "../api/openapi-parts.ts";
import { limitParameter, offsetParameter } from "../api/validated-query.ts";

export { OPENAPI_PATH, openApiDocument } from "../api/openapi.ts";
export { apiErrorSchema, fieldErrorsSchema };

/**
 * The items API's answers as zod schemas (its requests are lib/inventory/schemas.ts's, which
 * validate them): the document shows both (items-api.ts), and the tests check real answers
 * against them.
 */

export const MAX_PAGE_SIZE = 500;
export const DEFAULT_PAGE_SIZE = 50;

/** An item as the API answers with it. */
export const itemSchema = z.object(storedItemFields).meta({ id: "Item" });

export const itemPageSchema = z
  .object({
    items: z.array(itemSchema),
    total: z.int().min(0),
    limit: z.int().min(1).max(MAX_PAGE_SIZE),
    offset: z.int().min(0),
  })
  .meta({ id: "ItemPage" });

/** ?limit and ?offset as the list route reads them (absent or empty: the default). */
export const itemPageQuery = z.object({
  limit: limitParameter(
    MAX_PAGE_SIZE,
    `a page of this many, 1 to ${MAX_PAGE_SIZE} (${DEFAULT_PAGE_SIZE} when absent)`,
  ),
  offset: offsetParameter,
});
