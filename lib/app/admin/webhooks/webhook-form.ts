import type { FieldErrors } from "../../../inventory/schemas.ts";
import { maskUrlPassword } from "../../../text/url-credentials.ts";
import {
  type Checked,
  checkBodyTemplate,
  checkCaFile,
  checkConditions,
  checkContentType,
  checkEvents,
  checkHeaderLines,
  checkMaxPerSecond,
  checkMethod,
  checkName,
  checkOrdered,
  checkRetrySchedule,
  checkSecret,
  checkTimeoutMs,
  checkUrl,
  WEBHOOK_METHODS,
} from "../../../webhooks/definition/validate.ts";
import {
  ALL_EVENTS,
  ITEM_EVENTS,
  type NewWebhook,
  OPERATIONAL_EVENTS,
  type Webhook,
} from "../../../webhooks/model.ts";
import { formatRetrySchedule } from "../../../webhooks/policy/retry-schedule.ts";

export { WEBHOOK_METHODS };
export const EVENT_CHOICES: readonly string[] = [ALL_EVENTS, ...ITEM_EVENTS, ...OPERATIONAL_EVENTS];

/** The form as typed, to show it again with its errors. */
export interface WebhookFormValues {
  name: string;
  url: string;
  method: string;
  contentType: string;
  headers: string;
  events: string[];
  secret: string;
  removeSecret: boolean;
  maxPerSecond: string;
  enabled: boolean;
  bodyTemplate: string;
  conditions: string;
  sslVerification: boolean;
  caFile: string;
  timeoutMs: string;
  ordered: boolean;
  retrySchedule: string;
}

/** A new webhook's form; `retrySchedule` as prefilled (the demo offers `short`). */
export function emptyWebhookForm(retrySchedule = "day"): WebhookFormValues {
  return {
    name: "",
    url: "",
    method: "POST",
    contentType: "application/json",
    headers: "",
    events: [ALL_EVENTS],
    secret: "",
    removeSecret: false,
    maxPerSecond: "",
    enabled: true,
    bodyTemplate: "",
    conditions: "",
    sslVerification: true,
    caFile: "",
    timeoutMs: "",
    ordered: false,
    retrySchedule,
  };
}

/**
 * A stored webhook as its form shows it: the URL's password masked, which a save given `***`
 * back keeps (keepStoredPassword); a URL as typed is shown again as typed.
 */
export function webhookFormValues(webhook: Webhook): WebhookFormValues {
  return {
    name: webhook.name,
    url: maskUrlPassword(webhook.url),
    method: webhook.method,
    contentType: webhook.contentType,
    headers: webhook.headers.map(([name, value]) => `${name}: ${value}`).join("\n"),
    events: webhook.events,
    secret: "",
    removeSecret: false,
    maxPerSecond: webhook.maxPerSecond === null ? "" : String(webhook.maxPerSecond),
    enabled: webhook.enabled,
    bodyTemplate: webhook.bodyTemplate ?? "",
    conditions: webhook.conditions === null ? "" : JSON.stringify(webhook.conditions, null, 2),
    sslVerification: webhook.sslVerification,
    caFile: webhook.caFile ?? "",
    timeoutMs: webhook.timeoutMs === null ? "" : String(webhook.timeoutMs),
    ordered: webhook.ordered,
    retrySchedule: formatRetrySchedule(webhook.retrySchedule),
  };
}

/** Reads the form fields from `c.req.parseBody({ all: true })`. */
export function readWebhookForm(body: Record<string, unknown>): WebhookFormValues {
  const text = (key: string) => {
    const value = body[key];
    const first = Array.isArray(value) ? value[0] : value;
    return typeof first === "string" ? first : "";
  };
  const events = body.events;
  return {
    name: text("name"),
    url: text("url"),
    method: text("method"),
    contentType: text("contentType"),
    headers: text("headers"),
    events: (Array.isArray(events) ? events : [events]).filter(
      (e): e is string => typeof e === "string",
    ),
    secret: text("secret"),
    removeSecret: text("removeSecret") === "on",
    maxPerSecond: text("maxPerSecond"),
    enabled: text("enabled") === "on",
    bodyTemplate: text("bodyTemplate"),
    conditions: text("conditions"),
    // A checkbox left out of a post reads as unchecked: the unsafe choice is the checked one.
    sslVerification: text("skipSslVerification") !== "on",
    caFile: text("caFile"),
    timeoutMs: text("timeoutMs"),
    ordered: text("ordered") === "on",
    retrySchedule: text("retrySchedule"),
  };
}

export type ParsedWebhookForm =
  | {
      ok: true;
      webhook: Required<Omit<NewWebhook, "secret">>;
      /** The new secret typed in, "" when none was (create: generate one; edit: keep). */
      secret: string;
      removeSecret: boolean;
    }
  | { ok: false; errors: FieldErrors };

/**
 * The form checked field by field with the webhook field rules (lib/webhooks/definition/validate.ts): each
 * problem shown under its field. What only a save checks (a CA file's content, a template's
 * trial) is saveWebhook's (lib/webhooks/definition/save.ts).
 */
export async function parseWebhookForm(values: WebhookFormValues): Promise<ParsedWebhookForm> {
  const fieldErrors: Record<string, string[]> = {};
  function value<T>(key: keyof WebhookFormValues, checked: Checked<T>): T {
    if (checked.ok) return checked.value;
    fieldErrors[key] = [capitalised(checked.problem)];
    return undefined as T;
  }
  const secret = values.secret.trim();
  if (secret !== "") value("secret", checkSecret(secret));
  const webhook = {
    name: value("name", checkName(values.name)),
    url: value("url", checkUrl(values.url)),
    method: value("method", checkMethod(values.method)),
    contentType: value("contentType", checkContentType(values.contentType)),
    headers: value("headers", checkHeaderLines(values.headers)),
    events: value("events", checkEvents(values.events)),
    maxPerSecond: value("maxPerSecond", checkMaxPerSecond(values.maxPerSecond)),
    enabled: values.enabled,
    bodyTemplate: value("bodyTemplate", checkBodyTemplate(values.bodyTemplate)),
    conditions: value("conditions", checkConditions(values.conditions)),
    sslVerification: values.sslVerification,
    caFile: value("caFile", checkCaFile(values.caFile)),
    timeoutMs: value("timeoutMs", checkTimeoutMs(values.timeoutMs)),
    ordered: value("ordered", checkOrdered(values.ordered)),
    retrySchedule: value("retrySchedule", checkRetrySchedule(values.retrySchedule)),
  };
  if (Object.keys(fieldErrors).length > 0)
    return { ok: false, errors: { formErrors: [], fieldErrors } };
  return { ok: true, webhook, secret, removeSecret: values.removeSecret };
}

export function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
