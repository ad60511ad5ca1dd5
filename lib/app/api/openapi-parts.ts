import { resolver } from "hono-openapi";
import { z } from "zod";

/**
 * The pieces every API route's OpenAPI description shares (lib/app/*-openapi.ts): the error
 * shapes, the answers of the authentication and body checks, and helpers that turn zod schemas
 * into hono-openapi's responses, bodies and parameters.
 */

/** Every error: `{error}`, a sentence. */
export const apiErrorSchema = z.object({ error: z.string() }).meta({ id: "Error" });

/** 400 for a body that does not validate, 409 for a taken name: messages per field. */
export const fieldErrorsSchema = apiErrorSchema
  .extend({
    formErrors: z.array(z.string()).optional(),
    fieldErrors: z.record(z.string(), z.array(z.string())),
  })
  .meta({ id: "FieldErrors" });

export function json(description: string, schema: z.ZodType) {
  return { description, content: { "application/json": { schema: resolver(schema) } } };
}

export function body(schema: z.ZodType, description: string) {
  return {
    required: true,
    description,
    content: { "application/json": { schema: resolver(schema) } },
  };
}

/** A parameter's schema from zod, as the request gives it (input). */
export function parameterSchema(schema: z.ZodType): object {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: "input" });
  return rest;
}

/** The `{id}` path parameter of one `what` (item, webhook, delivery). */
export function idParameter(what: string) {
  return {
    name: "id",
    in: "path" as const,
    required: true,
    description: `the ${what}'s id`,
    schema: parameterSchema(z.int().min(1)),
  };
}

export const unauthorized = json(
  "ADMIN_TOKEN is set and the request has no valid bearer token (ADMIN_TOKEN, or an API token neither expired nor revoked) or admin session",
  apiErrorSchema,
);
export const throttled = json(
  "Too many wrong tokens from this address; Retry-After says when to try again",
  apiErrorSchema,
);
export const notJson = json("Content-Type is not application/json", apiErrorSchema);
export const tooLarge = json("The body is larger than the app's body limit", apiErrorSchema);
