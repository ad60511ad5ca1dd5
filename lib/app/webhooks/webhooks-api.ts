import { type Context, Hono } from "hono";
import { keepStoredPassword } from "../../text/url-credentials.ts";
import { readWebhookFields, webhookFieldsJson } from "../../webhooks/definition/field-table.ts";
import { rotateSecret } from "../../webhooks/definition/rotation.ts";
import { checkGraceSeconds, checkNewUrl } from "../../webhooks/definition/validate.ts";
import { DuplicateWebhookNameError, WebhookNotFoundError } from "../../webhooks/errors.ts";
import type { NewWebhook, Webhook, WebhookPatch } from "../../webhooks/model.ts";
import type { Store } from "../../webhooks/ports.ts";
import { type TemplateField, unboundedTemplate } from "../../webhooks/rendering/template-trial.ts";
import { checkCaFileContent } from "../../webhooks/sending/ca-file.ts";
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
}

/** The table's template fields by their JSON names, for a refused template's field error. */
const TEMPLATE_FIELD_NAMES: Record<TemplateField, string> = {
  bodyTemplate: "body_template",
  url: "url",
  headers: "headers",
};

/**
 * /api/webhooks: list, create, read, change and delete webhooks as JSON, by the one field table
 * (lib/webhooks/definition/field-table.ts, over the rules the CLI and the admin form use). A secret is
 * answered once, when POST generates it; it is never shown again. A URL's password is answered
 * as `***`, which a PATCH may send back to keep it.
 */
export function createWebhooksApi(options: WebhooksApiOptions): Hono<AppEnv> {
  const { store } = options;
  const api = new Hono<AppEnv>();
  api.use(jsonBodyLimit(options.bodyLimitBytes));

  api.get("/", webhookRouteDocs.list, async (c) => {
    const webhooks = await store.webhooks.list();
    const masked = c.get("readOnly");
    return c.json({
      webhooks: webhooks.map((w) => webhookJson(w, { masked })),
      total: webhooks.length,
    });
  });

  api.post("/", webhookRouteDocs.create, async (c) => {
    const body = await readJsonObject(c);
    if (body instanceof Response) return body;
    const read = readWebhookFields(body, { required: ["name", "url"], answerOnly: ANSWER_ONLY });
    if (!read.ok) return fieldProblems(c, "Invalid webhook", read.problems);
    const input = read.patch as NewWebhook;
    const newUrl = checkNewUrl(input.url);
    if (!newUrl.ok) return fieldProblems(c, "Invalid webhook", { url: newUrl.problem });
    const refused = await refusedOnSave(input, {
      url: input.url,
      headers: input.headers ?? [],
      bodyTemplate: input.bodyTemplate ?? null,
    });
    if (refused) return fieldProblems(c, "Invalid webhook", refused);
    const generated = input.secret === undefined ? options.generateSecret() : undefined;
    try {
      const webhook = await store.webhooks.create({ ...input, secret: input.secret ?? generated });
      c.header("Location", `/api/webhooks/${webhook.id}`);
      const answer = { ...webhookJson(webhook), ...(generated ? { secret: generated } : {}) };
      return c.json({ ...answer, ...(await warnings(options, webhook.url)) }, 201);
    } catch (error) {
      return duplicateNameResponse(c, error);
    }
  });

  api.get("/:id", webhookRouteDocs.get, async (c) => {
    const id = idParam(c.req.param("id"));
    const webhook = id === null ? null : await store.webhooks.get(id);
    return webhook ? c.json(webhookJson(webhook, { masked: c.get("readOnly") })) : notFound(c);
  });

  api.patch("/:id", webhookRouteDocs.update, async (c) => {
    const id = idParam(c.req.param("id"));
    const before = id === null ? null : await store.webhooks.get(id);
    if (id === null || before === null) return notFound(c);
    const body = await readJsonObject(c);
    if (body instanceof Response) return body;
    const read = readWebhookFields(body, { answerOnly: ANSWER_ONLY });
    if (!read.ok) return fieldProblems(c, "Invalid webhook", read.problems);
    const patch: WebhookPatch = read.patch;
    // A URL as GET answers it: its *** stands for the stored password (same scheme, user, host).
    if (patch.url !== undefined) patch.url = keepStoredPassword(patch.url, before.url);
    if (Object.keys(patch).length === 0) {
      return c.json({ error: "Nothing to change: give at least one field" }, 400);
    }
    const refused = await refusedOnSave(patch, {
      url: patch.url ?? before.url,
      headers: patch.headers ?? before.headers,
      bodyTemplate: patch.bodyTemplate === undefined ? before.bodyTemplate : patch.bodyTemplate,
    });
    if (refused) return fieldProblems(c, "Invalid webhook", refused);
    if (patch.enabled === false && before.enabled)
      patch.disabledReason = "disabled through the API";
    try {
      const updated = await store.webhooks.update(id, patch);
      const warned = patch.url === undefined ? {} : await warnings(options, updated.url);
      return c.json({ ...webhookJson(updated), ...warned });
    } catch (error) {
      if (error instanceof WebhookNotFoundError) return notFound(c);
      return duplicateNameResponse(c, error);
    }
  });

  api.post("/:id/rotate-secret", webhookRouteDocs.rotateSecret, async (c) => {
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

  api.delete("/:id", webhookRouteDocs.remove, async (c) => {
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
export function webhookJson(webhook: Webhook, options: { masked?: boolean } = {}) {
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

/**
 * What is checked only when saving, as the CLI and the form do: a CA file must be a readable PEM
 * file now, and a template must render a sample item within the render limits.
 */
async function refusedOnSave(
  given: Partial<NewWebhook>,
  templates: Pick<Webhook, "url" | "headers" | "bodyTemplate">,
): Promise<Record<string, string> | null> {
  if (typeof given.caFile === "string") {
    const content = await checkCaFileContent(given.caFile);
    if (!content.ok) return { ca_file: content.problem };
  }
  if (given.url === undefined && given.headers === undefined && given.bodyTemplate === undefined) {
    return null;
  }
  const unbounded = await unboundedTemplate(templates);
  return unbounded ? { [TEMPLATE_FIELD_NAMES[unbounded.field]]: unbounded.problem } : null;
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
