import type { StandardSchemaV1 } from "@standard-schema/spec";
import type { Context, MiddlewareHandler } from "hono";
import { validator } from "hono-openapi";
import type { AppEnv } from "../context.ts";
import { readJsonBody } from "./json-body.ts";

/**
 * A route's JSON body validated by the schema its OpenAPI document shows: the body read as
 * every API reads one (415 not JSON, 400 not parsed), then hono-openapi's `validator`, which
 * both validates with the schema and makes it the route's documented requestBody. A body the
 * schema refuses is answered by `refuse` (the API's 400 with its field errors).
 */
export function validatedJson<S extends StandardSchemaV1>(
  schema: S,
  refuse: (
    issues: readonly StandardSchemaV1.Issue[],
    body: unknown,
    c: Context<AppEnv>,
  ) => Response,
  options: { optional?: boolean } = {},
) {
  const read: MiddlewareHandler<AppEnv> = async (c, next) => {
    // An optional body may be left out altogether: no Content-Type and nothing sent.
    if (!(options.optional && (await emptyBody(c)))) {
      const body = await readJsonBody(c);
      if (body instanceof Response) return body;
    }
    await next();
  };
  const valid = validator("json", schema, (result, c) => {
    if (!result.success) return refuse(result.error, result.data, c as Context<AppEnv>);
  });
  return [read, valid] as const;
}

/** A request with no content type and nothing in its body (the API's body limit bounds the read). */
export async function emptyBody(c: Context<AppEnv>): Promise<boolean> {
  if (c.req.header("content-type") !== undefined) return false;
  return (await c.req.raw.clone().arrayBuffer()).byteLength === 0;
}

/** The field an issue is about (its path's first key), or null for the body as a whole. */
export function issueField(issue: StandardSchemaV1.Issue): string | null {
  const [first] = issue.path ?? [];
  if (first === undefined) return null;
  return String(typeof first === "object" ? first.key : first);
}

/** The keys a strict object refused (zod's unrecognized_keys issue), or none. */
export function unknownKeys(issue: StandardSchemaV1.Issue): string[] {
  const zodIssue = issue as StandardSchemaV1.Issue & { code?: string; keys?: string[] };
  return zodIssue.code === "unrecognized_keys" ? (zodIssue.keys ?? []) : [];
}
