import type { Env, Hono } from "hono";
import { generateSpecs } from "hono-openapi";
import { VERSION } from "../../version.ts";
import { EVENT_CATALOGUE, eventJsonSchema } from "../../webhooks/events/catalogue.ts";

/**
 * /api/openapi.json: the routes as each API file describes them beside their handlers (a body's
 * schema is the one its validator checks it with), and the event catalogue (lib/webhooks/events/catalogue.ts) as OpenAPI 3.1's
 * top-level `webhooks`: what a receiver is sent, per event.
 */

export const OPENAPI_PATH = "/api/openapi.json";

/** The headers every delivery carries (lib/webhooks/sending/request.ts), documented per event. */
const DELIVERY_HEADERS = [
  [
    "webhook-id",
    "the message id (msg_…): the same on every attempt and replay; de-duplicate on it",
  ],
  ["webhook-timestamp", "when this attempt was signed, in seconds since 1970"],
  [
    "webhook-signature",
    "Standard Webhooks signature(s) `v1,<base64>` when the webhook has a secret",
  ],
  ["X-Hook-Signature", "NetBox's signature: hex HMAC-SHA512 of the body, when there is a secret"],
] as const;

type Documentation = NonNullable<NonNullable<Parameters<typeof generateSpecs>[1]>["documentation"]>;

/** The catalogue as OpenAPI 3.1 `webhooks`: one POST per event, its body and headers. */
export function catalogueWebhooks(): NonNullable<Documentation["webhooks"]> {
  const parameters = DELIVERY_HEADERS.map(([name, description]) => ({
    name,
    in: "header" as const,
    required: name === "webhook-id" || name === "webhook-timestamp",
    description,
    schema: { type: "string" },
  }));
  // zod's JSON Schema is plain JSON, which the OpenAPI types do not narrow to their own.
  return Object.fromEntries(
    Object.entries(EVENT_CATALOGUE).map(([name, event]) => [
      name,
      {
        post: {
          operationId: `event:${name}`,
          summary: name,
          description: `${event.description} The body shown is NetBox's JSON body, sent when the webhook has no body template; the method is the webhook's (POST by default).`,
          parameters,
          requestBody: {
            required: true,
            content: { "application/json": { schema: eventJsonSchema(event) } },
          },
          responses: {
            "2XX": { description: "Received: any 2XX ends the delivery as successful" },
            "410": { description: "Gone: the delivery fails at once, without retries" },
          },
        },
      },
    ]),
  ) as unknown as NonNullable<Documentation["webhooks"]>;
}

/**
 * The OpenAPI document of `app`'s described routes, generated once (the routes do not change
 * while it runs). The bearer token is the app's ADMIN_TOKEN or an API token; only without either
 * is the API open.
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
            "Items of the inventory app, and the webhooks and deliveries they cause. Every item change queues its deliveries in the same transaction. `webhooks` lists the events a receiver is sent and their bodies. See docs/app.md and docs/webhooks.md.",
        },
        webhooks: catalogueWebhooks(),
        components: {
          securitySchemes: {
            adminToken: {
              type: "http",
              scheme: "bearer",
              description:
                "ADMIN_TOKEN, or an API token from `bun run app tokens add`, checked whenever one is sent, with or without ADMIN_TOKEN: a made-up, expired or revoked one gets 401, a read token 403 on anything but GET and HEAD. A request without one gets 401 once ADMIN_TOKEN is set or any API token exists; only an app with neither (loopback only, for development) answers it.",
            },
          },
        },
        security: [{ adminToken: [] }, {}],
      },
      exclude: [OPENAPI_PATH],
      // The API answers 400 itself (fieldErrors), described per route above.
      defaultValidationErrorResponse: false,
    })
      .then(withIdempotencyKeys)
      .then(withWriteRefusals)
      .catch((error: unknown) => {
        // Kept only once made: a failed generation is tried again by the next request.
        document = undefined;
        throw error;
      });
    return document;
  };
}

/** The Idempotency-Key header (api/idempotency.ts), as every POST of the API takes it. */
const IDEMPOTENCY_KEY = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description:
    "Makes a retried POST safe: the same key and request within 24 hours get the first answer again (`Idempotent-Replayed: true`) without running twice; the same key with another request gets 409, as does a repeat while the first still runs (a request cut off before its answer frees its key 10 minutes after it began). Per credential; 1 to 255 printable ASCII characters.",
  schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x21-\\x7e]+$" },
};

/** Adds the Idempotency-Key parameter to every POST operation of a generated document. */
function withIdempotencyKeys<T>(document: T): T {
  const paths = (document as { paths?: Record<string, Record<string, { parameters?: unknown[] }>> })
    .paths;
  for (const item of Object.values(paths ?? {})) {
    const post = item.post;
    if (post !== undefined) post.parameters = [...(post.parameters ?? []), IDEMPOTENCY_KEY];
  }
  return document;
}

/** Methods that write: a read token, and a cross-site request, are refused them. */
const WRITE_METHODS = ["post", "put", "patch", "delete"] as const;

/**
 * The 403 (and 415) every write can get before its handler runs (lib/app/auth/auth.ts,
 * api-cross-site.ts), added to each write operation that does not describe them itself.
 */
const WRITE_REFUSALS = {
  "403": {
    description:
      "Refused: a read token writing, or a write riding on the admin session or the open mode from another site (Origin or Sec-Fetch-Site); a program sends Authorization: Bearer <token>",
    content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
  },
  "415": {
    description:
      "A write riding on the admin session or the open mode without Content-Type: application/json",
    content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
  },
};

/** Adds WRITE_REFUSALS to every write operation of a generated document. */
function withWriteRefusals<T>(document: T): T {
  type Operation = { responses?: Record<string, unknown> };
  const paths = (document as { paths?: Record<string, Record<string, Operation | undefined>> })
    .paths;
  for (const item of Object.values(paths ?? {})) {
    for (const method of WRITE_METHODS) {
      const operation = item[method];
      if (operation === undefined) continue;
      operation.responses = { ...WRITE_REFUSALS, ...operation.responses };
    }
  }
  return document;
}
