import type { NewWebhook, Webhook } from "../model.ts";
import type { WebhookField, WebhookFields } from "./field-faces.ts";
import { OPTION_FIELDS } from "./field-rows-options.ts";
import { REQUEST_FIELDS } from "./field-rows-request.ts";

/**
 * The webhook fields a person or a program can set, one row each with all its faces
 * (field-faces.ts): the management API reads and answers by the rows, the OpenAPI document
 * shows their schemas, `webhooks add/update` make their flags and help from them, the admin
 * form its inputs and labels, the listings their notes. A field is one row (field-rows-*.ts)
 * plus its storage column; the rows are in the form's order.
 */
export const WEBHOOK_FIELDS: WebhookFields = [...REQUEST_FIELDS, ...OPTION_FIELDS];

/** A table's row by JSON name. */
export function fieldByName(fields: WebhookFields, name: string): WebhookField | undefined {
  return fields.find((f) => f.name === name);
}

/** A table's row by stored key. */
export function fieldByKey(fields: WebhookFields, key: string): WebhookField | undefined {
  return fields.find((f) => f.key === key);
}

export type ReadWebhook =
  | { ok: true; patch: Partial<NewWebhook> }
  | { ok: false; problems: Record<string, string> };

/**
 * A JSON object of webhook fields read by the table: the patch, or a problem per field named
 * (an unknown field is one; one of the caller's `answerOnly` says so). `required` fields must
 * be present.
 */
export function readWebhookFields(
  body: Record<string, unknown>,
  options: {
    required?: readonly string[];
    answerOnly?: ReadonlySet<string>;
    fields?: WebhookFields;
  } = {},
): ReadWebhook {
  const fields = options.fields ?? WEBHOOK_FIELDS;
  const problems: Record<string, string> = {};
  const patch: Partial<NewWebhook> = {};
  for (const [name, value] of Object.entries(body)) {
    const spec = fieldByName(fields, name);
    if (spec === undefined) {
      problems[name] = options.answerOnly?.has(name)
        ? "set by the app, not by a request"
        : "unknown field";
      continue;
    }
    const read = spec.read(value);
    if (read.ok) Object.assign(patch, read.value);
    else problems[name] = read.problem;
  }
  for (const name of options.required ?? []) {
    if (!(name in body)) problems[name] = "required";
  }
  return Object.keys(problems).length === 0 ? { ok: true, patch } : { ok: false, problems };
}

/**
 * A webhook as JSON, by the table: every shown field, never the secret itself; `masked`
 * (a read-only token's answer): each field's credentials as ***.
 */
export function webhookFieldsJson(
  webhook: Webhook,
  options: { masked?: boolean; fields?: WebhookFields } = {},
): Record<string, unknown> {
  const shown: Record<string, unknown> = {};
  for (const spec of options.fields ?? WEBHOOK_FIELDS) {
    const value = options.masked && spec.masked ? spec.masked(webhook) : spec.show(webhook);
    if (value !== undefined) shown[spec.name] = value;
  }
  return shown;
}
