import type { Context } from "hono";
import { z } from "zod";
import { optionalParameter } from "./validated-query.ts";

/**
 * Cursor paging of the API's lists (GitHub's `Link: <…>; rel="next"`, Stripe's
 * `starting_after`): a page's answer has `next`, the cursor of the page after it (null on the
 * last), and the same as a `Link` header with the request's own query and `cursor` set. The
 * cursor is the last row's id, the next page the rows past it in the list's order (keyset
 * paging): ids only grow and are never reused, so a row inserted or deleted meanwhile never
 * makes another appear twice or go missing, as offsets do. Offsets keep working beside it.
 */

/** The `cursor` query parameter as documented: opaque to clients, a row id here. */
export const cursorSchema = z
  .string()
  .regex(/^[1-9]\d{0,15}$/)
  .describe(
    "the `next` of the page before (also in its Link header): the page after it, stable while others write; not with offset",
  );

/** The `next` field of a paged answer. */
export const nextSchema = z
  .string()
  .nullable()
  .describe(
    "the cursor of the next page (`?cursor=`), null on the last; the Link header has its URL",
  );

/** A paged answer's Link header, as the OpenAPI document names it. */
export const linkHeader = {
  Link: {
    description: 'the next page\'s URL, `<…?cursor=…>; rel="next"`; absent on the last page',
    schema: { type: "string" as const },
  },
};

/** ?cursor as the list routes read it: a row id, absent when empty. */
export const cursorParameter = optionalParameter(
  cursorSchema
    .clone()
    .regex(/^[1-9]\d{0,15}$/, "must be the next of a page before")
    .transform(Number),
).describe(cursorSchema.description ?? "");

/** A cursor and an offset other than 0 together are refused: a page is found by one of them. */
export function offsetOrCursor(
  query: { offset?: number; cursor?: number },
  ctx: z.RefinementCtx,
): void {
  if (query.cursor !== undefined && query.offset !== undefined && query.offset !== 0) {
    ctx.addIssue({
      code: "custom",
      path: ["offset"],
      message: "give either offset or cursor, not both",
    });
  }
}

/**
 * A page from `limit + 1` rows read: the rows shown, and the cursor of the page after them
 * (the last shown row's id), null when no row followed.
 */
export function pageOf<T extends { id: number }>(
  read: readonly T[],
  limit: number,
): { rows: T[]; next: string | null } {
  const rows = read.slice(0, limit);
  const last = rows.at(-1);
  return { rows, next: read.length > limit && last ? String(last.id) : null };
}

/** Sets `Link: <path?…&cursor=next>; rel="next"` (the request's query, its offset dropped). */
export function setNextLink(c: Context, next: string | null): void {
  if (next === null) return;
  const url = new URL(c.req.url);
  url.searchParams.delete("offset");
  url.searchParams.set("cursor", next);
  c.header("Link", `<${url.pathname}${url.search}>; rel="next"`);
}
