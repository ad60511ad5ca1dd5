import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { errorMessage } from "../../text/error-message.ts";
import type { AppEnv } from "../context.ts";

export const DEFAULT_BODY_LIMIT_BYTES = 64 * 1024;

/** 413 with a JSON error for a body over `limitBytes` (the API's answer, not Hono's text). */
export function jsonBodyLimit(limitBytes: number): MiddlewareHandler<AppEnv> {
  return bodyLimit({
    maxSize: limitBytes,
    onError: (c) =>
      c.json({ error: `Request body too large: the limit is ${limitBytes} bytes` }, 413),
  });
}

/** Whether a Content-Type header names JSON (`application/json`, `application/…+json`). */
export function isJsonContentType(type: string | undefined): boolean {
  return /^application\/([\w.-]+\+)?json\s*(;|$)/i.test(type ?? "");
}

/** The parsed JSON body, or the 415 (not JSON) or 400 (does not parse) response to send instead. */
export async function readJsonBody(c: Context<AppEnv>): Promise<unknown | Response> {
  if (!isJsonContentType(c.req.header("content-type"))) {
    return c.json({ error: "Content-Type must be application/json" }, 415);
  }
  try {
    return await c.req.json();
  } catch (error) {
    return c.json({ error: `Invalid JSON: ${errorMessage(error)}` }, 400);
  }
}

/** The parsed JSON body when it is an object, or the 415/400 response to send instead. */
export async function readJsonObject(
  c: Context<AppEnv>,
): Promise<Record<string, unknown> | Response> {
  const body = await readJsonBody(c);
  if (body instanceof Response) return body;
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return c.json({ error: "The body must be a JSON object" }, 400);
  }
  return body as Record<string, unknown>;
}

/** 400 naming each field and its problem, in the items API's shape (`fieldErrors`). */
export function fieldProblems(
  c: Context<AppEnv>,
  error: string,
  problems: Record<string, string>,
): Response {
  const fieldErrors = Object.fromEntries(
    Object.entries(problems).map(([name, problem]) => [name, [capitalised(problem)]]),
  );
  return c.json({ error, formErrors: [], fieldErrors }, 400);
}

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
