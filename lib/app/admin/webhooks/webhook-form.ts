import type { FieldErrors } from "../../../inventory/schemas.ts";
import type { FormValue, WebhookFields } from "../../../webhooks/definition/field-faces.ts";
import { WEBHOOK_FIELDS } from "../../../webhooks/definition/field-table.ts";
import type { NewWebhook, Webhook } from "../../../webhooks/model.ts";

/**
 * The admin's webhook form, made from the field table's rows (their form faces): the values a
 * new webhook starts with, a stored webhook's, what a post gives, and the rows' rules over them.
 * Values are by the field's stored key, which is each input's name (a checkbox may post under
 * its own name); a removable write-only field adds `remove<Key>`.
 */

/** The form as typed, to show it again with its errors. */
export type WebhookFormValues = Record<string, FormValue>;

/** The checkbox removing a write-only field's value (the secret: `removeSecret`). */
export function removalName(key: string): string {
  return `remove${key.charAt(0).toUpperCase()}${key.slice(1)}`;
}

/** A new webhook's form; `initial` changes some values (the demo offers retry schedule `short`). */
export function emptyWebhookForm(
  fields: WebhookFields = WEBHOOK_FIELDS,
  initial: Record<string, FormValue> = {},
): WebhookFormValues {
  const values: WebhookFormValues = {};
  for (const { key, form } of fields) {
    if (!form) continue;
    values[key] = initial[key] ?? form.initial;
    if (form.input.kind === "password") values[removalName(key)] = false;
  }
  return values;
}

/**
 * A stored webhook as its form shows it (the URL's password masked, which a save given `***`
 * back keeps); a write-only field is shown empty.
 */
export function webhookFormValues(
  webhook: Webhook,
  fields: WebhookFields = WEBHOOK_FIELDS,
): WebhookFormValues {
  const values = emptyWebhookForm(fields);
  for (const { key, form } of fields) if (form) values[key] = form.value(webhook);
  return values;
}

/** Reads the form fields from `c.req.parseBody({ all: true })`. */
export function readWebhookForm(
  body: Record<string, unknown>,
  fields: WebhookFields = WEBHOOK_FIELDS,
): WebhookFormValues {
  const text = (name: string) => {
    const value = body[name];
    const first = Array.isArray(value) ? value[0] : value;
    return typeof first === "string" ? first : "";
  };
  const values: WebhookFormValues = {};
  for (const { key, form } of fields) {
    if (!form) continue;
    const { input } = form;
    if (input.kind === "checkboxes") {
      const given = body[key];
      values[key] = (Array.isArray(given) ? given : [given]).filter(
        (e): e is string => typeof e === "string",
      );
    } else if (input.kind === "checkbox") {
      // A checkbox left out of a post reads as unchecked: the unsafe choice is the checked one.
      values[key] = (text(input.name ?? key) === "on") !== (input.inverted === true);
    } else {
      values[key] = text(key);
      if (input.kind === "password") values[removalName(key)] = text(removalName(key)) === "on";
    }
  }
  return values;
}

export type ParsedWebhookForm =
  | {
      ok: true;
      /**
       * Every field by its rule. A write-only field left blank is absent (create: generated;
       * edit: kept), or null when its removal was ticked.
       */
      webhook: Required<Omit<NewWebhook, "secret">> & Pick<NewWebhook, "secret">;
    }
  | { ok: false; errors: FieldErrors };

/**
 * The form checked field by field with the rows' rules (lib/webhooks/definition/validate.ts):
 * each problem shown under its field. What only a save checks (a CA file's content, a
 * template's trial) is saveWebhook's (lib/webhooks/definition/save.ts).
 */
export async function parseWebhookForm(
  values: WebhookFormValues,
  fields: WebhookFields = WEBHOOK_FIELDS,
): Promise<ParsedWebhookForm> {
  const fieldErrors: Record<string, string[]> = {};
  const webhook: Record<string, unknown> = {};
  for (const { key, form } of fields) {
    if (!form) continue;
    const value = values[key] ?? form.initial;
    if (form.input.kind === "password" && typeof value === "string" && value.trim() === "") {
      if (values[removalName(key)] === true) webhook[key] = null;
      continue;
    }
    const checked = form.read(
      typeof value === "string" && form.input.kind === "password" ? value.trim() : value,
    );
    if (checked === undefined) continue;
    if (checked.ok) webhook[key] = checked.value;
    else fieldErrors[key] = [capitalised(checked.problem)];
  }
  if (Object.keys(fieldErrors).length > 0) {
    return { ok: false, errors: { formErrors: [], fieldErrors } };
  }
  return { ok: true, webhook: webhook as Required<Omit<NewWebhook, "secret">> };
}

export function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
