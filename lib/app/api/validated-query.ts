import type { StandardSchemaV1 } from "@standard-schema/spec";
import type { Context } from "hono";
import { validator } from "hono-openapi";
import { z } from "zod";
import type { AppEnv } from "../context.ts";
import { fieldProblems } from "./json-body.ts";
import { issueField, unknownKeys } from "./validated-json.ts";

/**
 * A route's query string validated by the schema its OpenAPI document shows (hono-openapi's
 * `validator`: the same schema documents the parameters and reads them). A query it refuses is
 * the API's 400 with a problem per parameter (`title` as its error); the handler reads the
 * converted values with `c.req.valid("query")`.
 */
export function validatedQuery<S extends StandardSchemaV1>(schema: S, title: string) {
  return validator("query", schema, (result, c) => {
    if (!result.success)
      return fieldProblems(c as Context<AppEnv>, title, problemsOf(result.error));
  });
}

/** One problem per parameter: the first issue's message; a parameter not known, "unknown field". */
function problemsOf(issues: readonly StandardSchemaV1.Issue[]): Record<string, string> {
  const problems: Record<string, string> = {};
  for (const issue of issues) {
    for (const key of unknownKeys(issue)) problems[key] ??= "unknown field";
    const field = issueField(issue);
    if (field !== null && unknownKeys(issue).length === 0) problems[field] ??= issue.message;
  }
  return problems;
}

/** An empty parameter (`?webhook=&state=failed`) is no parameter, as it always was. */
export function optionalParameter<T extends z.ZodType>(schema: T) {
  return z.preprocess((value) => (value === "" ? undefined : value), schema.optional());
}

/** A whole number in [min, max] written in digits, as a query parameter; `message` when not. */
export function wholeNumberParameter(min: number, max: number, message: string) {
  return z
    .string()
    .regex(/^\d{1,13}$/, message)
    .transform(Number)
    .pipe(z.number().int().min(min, message).max(max, message));
}

/** ?offset: rows to skip, 0 when absent. */
export const offsetParameter = optionalParameter(
  wholeNumberParameter(0, 1e12, "must be a whole number, 0 or more"),
).describe("rows to skip, 0 or more (0 when absent)");

/** ?limit: a page of at most `max` rows. */
export function limitParameter(max: number, description: string) {
  return optionalParameter(
    wholeNumberParameter(1, max, `must be a whole number from 1 to ${max}`),
  ).describe(description);
}
