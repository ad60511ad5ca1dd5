import { type Context, Hono } from "hono";
import type { WebhookFields } from "../../webhooks/definition/field-faces.ts";
import {
  fieldByKey,
  readWebhookFields,
  WEBHOOK_FIELDS,
  webhookFieldsJson,
} from "../../webhooks/definition/field-table.ts";
import { rotateSecret } from "../../webhooks/definition/rotation.ts";
import { type SaveRefusal, saveWebhook } from "../../webhooks/definition/save.ts";
import { checkGraceSeconds } from "../../webhooks/definition/validate.ts";
import { DuplicateWebhookNameError, WebhookNotFoundError } from "../../webhooks/errors.ts";
import type { Webhook, WebhookPatch } from "../../webhooks/model.ts";
import type { Store } from "../../webhooks/ports.ts";
import { fieldProblems, jsonBodyLimit, readJsonObject } from "../api/json-body.ts";
import type { AppEnv } from "../context.ts";
import { idParam } from "../items/items-api.ts";
import { webhookRouteDocs } from "./webhooks-openapi.ts";

export interface WebhooksApiOptions {
  store: Store;
  bodyLimitBytes: number;
  generateSecret: () => string;
  /** The app's clock: when a rotation's grace period ends. */
  now: () => Date;
  /** Why workers will refuse a URL (WEBHOOK_ALLOWED_HOSTS, the SSRF guard), or null. */
  urlWarning?: (url: string) => Promise<string | null>;
  /** The webhook fields (default WEBHOOK_FIELDS; a test's table adds its own). */
  fields?: WebhookFields;
}

/**
 * /api/webhooks: list, create, read, change and delete webhooks as JSON, by the one field table
 * (lib/webhooks/definition/field-table.ts, over the rules the CLI and the admin form use). A secret is
 * answered once, when POST generates it; it is never shown again. A URL's password is answered
 * as `***`, which a PATCH may send back to keep it.
 */
export function createWebhooksApi(options: WebhooksApiOptions): Hono<AppEnv> {
  const { store } = options;
  const fields = options.fields ?? WEBHOOK_FIELDS;
  const docs = webhookRouteDocs(fields);
  const webhookJson = (webhook: Webhook, masked = false) =>
    webhookAnswer(webhook, { masked, fields });
  const api = new Hono<AppEnv>();
  api.use(jsonBodyLimit(options.bodyLimitBytes));

  api.get("/", docs.list, async (c) => {
    const webhooks = await store.webhooks.list();
    const masked = c.get("readOnly");
    return c.json({
      webhooks: webhooks.map((w) => webhookJson(w, masked)),
      total: webhooks.length,
    });
  });

  api.post("/", docs.create, async (c) => {
    const body = await readJsonObject(c);
    if (body instanceof Response) return body;
    const read = readWebhookFields(body, {
      required: ["name", "url"],
      answerOnly: ANSWER_ONLY,
      fields,
    });
    if (!read.ok) return fieldProblems(c, "Invalid webhook", read.problems);
    const generate = read.patch.secret === undefined;
    try {
      const saved = await saveWebhook(store.webhooks, {
        before: null,
        fields: read.patch,
        generateSecret: options.generateSecret,
      });
      if (!saved.ok) return refusedOnSave(c, saved.refused, fields);
      const { webhook } = saved;
      c.header("Location", `/api/webhooks/${webhook.id}`);
      const answer = { ...webhookJson(webhook), ...(generate ? { secret: webhook.secret } : {}) };
      return c.json({ ...answer, ...(await warnings(options, webhook.url)) }, 201);
    } catch (error) {
      return duplicateNameResponse(c, error);
    }
  });

  api.get("/:id", docs.get, async (c) => {
    const id = idParam(c.req.param("id"));
    const webhook = id === null ? null : await store.webhooks.get(id);
    return webhook ? c.json(webhookJson(webhook, c.get("readOnly"))) : notFound(c);
  });

  api.patch("/:id", docs.update, async (c) => {
    const id = idParam(c.req.param("id"));
    const before = id === null ? null : await store.webhooks.get(id);
    if (id === null || before === null) return notFound(c);
    const body = await readJsonObject(c);
    if (body instanceof Response) return body;
    const read = readWebhookFields(body, { answerOnly: ANSWER_ONLY, fields });
    if (!read.ok) return fieldProblems(c, "Invalid webhook", read.problems);
    const patch: WebhookPatch = read.patch;
    if (Object.keys(patch).length === 0) {
      return c.json({ error: "Nothing to change: give at least one field" }, 400);
    }
    if (patch.enabled === false && before.enabled)
      patch.disabledReason = "disabled through the API";
    try {
      const saved = await saveWebhook(store.webhooks, { before, fields: patch });
      if (!saved.ok) return refusedOnSave(c, saved.refused, fields);
      const updated = saved.webhook;
      const warned = patch.url === undefined ? {} : await warnings(options, updated.url);
      return c.json({ ...webhookJson(updated), ...warned });
    } catch (error) {
      if (error instanceof WebhookNotFoundError) return notFound(c);
      return duplicateNameResponse(c, error);
    }
  });

  api.post("/:id/rotate-secret", docs.rotateSecret, async (c) => {
    const id = idParam(c.req.param("id"));
    if (id === null) return notFound(c);
    // No body at all is the default grace; a body is a JSON object with grace_seconds only.
    const body = (await emptyBody(c)) ? {} : await readJsonObject(c);
    if (body instanceof Response) return body;
    const unknown = Object.keys(body).find((name) => name !== "grace_seconds");
    if (unknown !== undefined) {
      return fieldProblems(c, "Invalid rotation", { [unknown]: "unknown field" });
    }
    const given = body.grace_seconds;
    const grace =
      given === undefined
        ? undefined
        : typeof given === "number"
          ? checkGraceSeconds(String(given))
          : { ok: false as const, problem: "must be a number" };
    if (grace !== undefined && !grace.ok) {
      return fieldProblems(c, "Invalid rotation", { grace_seconds: grace.problem });
    }
    const rotated = await rotateSecret(store.webhooks, id, {
      graceSeconds: grace?.value,
      now: options.now().getTime(),
      generateSecret: options.generateSecret,
    });
    if (rotated === null) return notFound(c);
    return c.json({
      secret: rotated.secret,
      previous_valid_until: isoOrNull(rotated.previousValidUntil),
    });
  });

  api.delete("/:id", docs.remove, async (c) => {
    const id = idParam(c.req.param("id"));
    const removed = id === null ? false : await store.webhooks.remove(id);
    return removed ? c.body(null, 204) : notFound(c);
  });

  return api;
}

/** What an answer has besides the table's fields: refused in a request, with the reason. */
const ANSWER_ONLY: ReadonlySet<string> = new Set([
  "id",
  "has_secret",
  "disabled_reason",
  "disabled_at",
  "failing_since",
  "created_at",
  "updated_at",
  "warnings",
]);

/**
 * A webhook as the API answers with it: the table's fields and what the app keeps about it;
 * `masked` for a read-only token (credentials as ***).
 */
export function webhookAnswer(
  webhook: Webhook,
  options: { masked?: boolean; fields?: WebhookFields } = {},
) {
  return {
    id: webhook.id,
    ...webhookFieldsJson(webhook, options),
    has_secret: webhook.secret !== null,
    previous_secret_valid_until: isoOrNull(
      webhook.previousSecret === null ? null : webhook.previousSecretUntil,
    ),
    disabled_reason: webhook.disabledReason,
    disabled_at: isoOrNull(webhook.disabledAt),
    failing_since: isoOrNull(webhook.failingSince ?? null),
    created_at: new Date(webhook.createdAt).toISOString(),
    updated_at: new Date(webhook.updatedAt).toISOString(),
  };
}

export function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

/** A save's refusal (save.ts) as the field problem of a 400, by the field's JSON name. */
function refusedOnSave(c: Context<AppEnv>, refusal: SaveRefusal, fields: WebhookFields): Response {
  const name = fieldByKey(fields, refusal.key)?.name ?? refusal.key;
  return fieldProblems(c, "Invalid webhook", { [name]: refusal.problem });
}

async function warnings(
  options: WebhooksApiOptions,
  url: string,
): Promise<{ warnings?: string[] }> {
  const warning = options.urlWarning ? await options.urlWarning(url) : null;
  return warning === null ? {} : { warnings: [warning] };
}

function duplicateNameResponse(c: Context<AppEnv>, error: unknown): Response {
  if (error instanceof DuplicateWebhookNameError) {
    return c.json({ error: error.message, fieldErrors: { name: ["Already taken"] } }, 409);
  }
  throw error;
}

/** A request with no content type and nothing in its body (the jsonBodyLimit bounds the read). */
async function emptyBody(c: Context<AppEnv>): Promise<boolean> {
  if (c.req.header("content-type") !== undefined) return false;
  return (await c.req.raw.clone().arrayBuffer()).byteLength === 0;
}

function notFound(c: Context<AppEnv>): Response {
  return c.json({ error: "Webhook not found" }, 404);
}
