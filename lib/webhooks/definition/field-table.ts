import { z } from "zod";
import { MASKED_PASSWORD, maskUrlPassword, maskUrlSecrets } from "../../text/url-credentials.ts";
import { SUBSCRIBABLE_EVENTS } from "../events/events.ts";
import { CONDITION_OPS, type NewWebhook, type Webhook } from "../model.ts";
import { formatRetrySchedule } from "../policy/retry-schedule.ts";
import {
  type Checked,
  checkBodyTemplate,
  checkCaFile,
  checkConditions,
  checkContentType,
  checkEvents,
  checkHeader,
  checkHeadersTotal,
  checkMaxPerSecond,
  checkMethod,
  checkName,
  checkOrdered,
  checkRetrySchedule,
  checkSecret,
  checkTimeoutMs,
  checkUrl,
  MAX_NAME_LENGTH,
  MAX_OPTION_TEXT,
  WEBHOOK_METHODS,
  WEBHOOK_TIMEOUT_RANGE,
} from "./validate.ts";

/**
 * The webhook fields a person or a program can set, as one table: each field's name (the flag of
 * `webhooks add/update` with `_` for `-`), how a JSON value becomes the stored value by the field
 * rules of validate.ts, how it is shown, and its JSON shape for the OpenAPI document. The
 * management API (lib/app/webhooks/webhooks-api.ts) reads and writes webhooks through it, so a field
 * added here appears in the API, its answers and its document with no other change. The CLI's
 * flags and the admin form's fields name the same fields (tests/webhooks/definition/field-table.test.ts).
 */

export interface WebhookField {
  /** The JSON name: the CLI flag with `_` for `-` (`content_type`, `timeout_ms`). */
  name: string;
  /** The stored value's key (Webhook, NewWebhook), which the admin form's fields use too. */
  key: keyof NewWebhook;
  /** The given JSON value as a patch of the stored webhook, or the problem. */
  read(value: unknown): Checked<Partial<NewWebhook>>;
  /** The stored value as JSON; undefined for a field never shown (the secret). */
  show(webhook: Webhook): unknown;
  /**
   * The value as a read-only API token sees it, for a field that can hold credentials: those
   * masked as ***. Absent: `show`'s. Write tokens and sessions always get `show`'s.
   */
  masked?(webhook: Webhook): unknown;
  /** The JSON value as given and as shown, for the OpenAPI document. */
  schema: z.ZodType;
}

function refused(problem: string): { ok: false; problem: string } {
  return { ok: false, problem };
}

/** A field stored under `key`, read by `rule` once `toRule` has the value in the rule's terms. */
function field<K extends keyof NewWebhook, V>(spec: {
  name: string;
  key: K;
  schema: z.ZodType;
  toRule: (value: unknown) => V | undefined;
  expected: string;
  rule: (value: V) => Checked<NewWebhook[K]>;
  show: (webhook: Webhook) => unknown;
  masked?: (webhook: Webhook) => unknown;
}): WebhookField {
  return {
    name: spec.name,
    key: spec.key,
    schema: spec.schema,
    show: spec.show,
    ...(spec.masked ? { masked: spec.masked } : {}),
    read(value) {
      const given = spec.toRule(value);
      if (given === undefined) return refused(`must be ${spec.expected}`);
      const checked = spec.rule(given);
      return checked.ok ? { ok: true, value: { [spec.key]: checked.value } } : checked;
    },
  };
}

const text = (value: unknown) => (typeof value === "string" ? value : undefined);
/** null clears a field whose rule reads blank text as "none". */
const textOrNull = (value: unknown) => (value === null ? "" : text(value));
const numberOrNull = (value: unknown) =>
  value === null
    ? ""
    : typeof value === "number" && Number.isFinite(value)
      ? String(value)
      : undefined;
const bool = (value: unknown) => (typeof value === "boolean" ? value : undefined);
const strings = (value: unknown) =>
  Array.isArray(value) && value.every((v) => typeof v === "string")
    ? (value as string[])
    : undefined;
const same = <T>(value: T): Checked<T> => ({ ok: true, value });

/** `Name: Value` lines, as `--header`; each by the header rule, a problem naming its line. */
function checkHeaderList(lines: string[]): Checked<Array<[string, string]>> {
  const headers: Array<[string, string]> = [];
  for (const [index, line] of lines.entries()) {
    const header = checkHeader(line.trim());
    if (!header.ok) return refused(`item ${index + 1}: ${header.problem}`);
    headers.push(header.value);
  }
  return checkHeadersTotal(headers);
}

const conditionSchema = z
  .record(z.string(), z.unknown())
  .describe(
    `NetBox's condition set: {"and": [...]} or {"or": [...]} of {"attr", "value", "op" (${CONDITION_OPS.join(", ")}), "negate"}`,
  );

export const WEBHOOK_FIELDS: readonly WebhookField[] = [
  field({
    name: "name",
    key: "name",
    schema: z.string().min(1).max(MAX_NAME_LENGTH).describe("unique name"),
    toRule: text,
    expected: "a string",
    rule: checkName,
    show: (w) => w.name,
  }),
  field({
    name: "url",
    key: "url",
    schema: z
      .string()
      .describe(
        "payload URL, http or https; may be a Jinja2 template after the scheme. A password in it is answered as *** (user:***@host); sent back with the same scheme, user and host, *** keeps the stored one. A read-only token gets each query parameter's value as *** too",
      ),
    toRule: text,
    expected: "a string",
    rule: checkUrl,
    // Stored and sent as given; every answer masks the password (lib/text/url-credentials.ts).
    show: (w) => maskUrlPassword(w.url),
    masked: (w) => maskUrlSecrets(w.url),
  }),
  field({
    name: "events",
    key: "events",
    schema: z.array(z.enum(SUBSCRIBABLE_EVENTS as [string, ...string[]])).min(1),
    toRule: strings,
    expected: "a list of event names",
    rule: checkEvents,
    show: (w) => w.events,
  }),
  field({
    name: "method",
    key: "method",
    schema: z.enum(WEBHOOK_METHODS),
    toRule: text,
    expected: "a string",
    rule: checkMethod,
    show: (w) => w.method,
  }),
  field({
    name: "content_type",
    key: "contentType",
    schema: z.string().describe("Content-Type header, e.g. application/json"),
    toRule: text,
    expected: "a string",
    rule: checkContentType,
    show: (w) => w.contentType,
  }),
  field({
    name: "headers",
    key: "headers",
    schema: z
      .array(z.string())
      .describe(
        "extra headers as 'Name: Value' lines, in order. A read-only token gets every value as *** ('Authorization: ***'): header values are where credentials go",
      ),
    toRule: strings,
    expected: "a list of 'Name: Value' strings",
    rule: checkHeaderList,
    show: (w) => w.headers.map(([name, value]) => `${name}: ${value}`),
    masked: (w) =>
      w.headers.map(([name, value]) => `${name}: ${value === "" ? "" : MASKED_PASSWORD}`),
  }),
  field({
    name: "secret",
    key: "secret",
    schema: z
      .string()
      .nullable()
      .describe("signing secret whsec_…; null sends unsigned requests. Write only: never shown"),
    toRule: textOrNull,
    expected: "a string or null",
    rule: (given: string) => (given === "" ? same(null) : checkSecret(given)),
    show: () => undefined,
  }),
  field({
    name: "body_template",
    key: "bodyTemplate",
    schema: z
      .string()
      .max(MAX_OPTION_TEXT)
      .nullable()
      .describe("Jinja2 template of the body; null sends NetBox's JSON body"),
    toRule: textOrNull,
    expected: "a string or null",
    rule: checkBodyTemplate,
    show: (w) => w.bodyTemplate,
  }),
  field({
    name: "condition",
    key: "conditions",
    schema: conditionSchema.nullable(),
    toRule: (value) =>
      value === null ? "" : typeof value === "object" ? JSON.stringify(value) : undefined,
    expected: "a condition set (a JSON object) or null",
    rule: checkConditions,
    show: (w) => w.conditions,
  }),
  field({
    name: "ssl_verify",
    key: "sslVerification",
    schema: z.boolean().describe("verify the receiver's TLS certificate"),
    toRule: bool,
    expected: "true or false",
    rule: same,
    show: (w) => w.sslVerification,
  }),
  field({
    name: "ca_file",
    key: "caFile",
    schema: z
      .string()
      .nullable()
      .describe("absolute path of a PEM file of CAs to trust; null: the system's"),
    toRule: textOrNull,
    expected: "a string or null",
    rule: checkCaFile,
    show: (w) => w.caFile,
  }),
  field({
    name: "timeout_ms",
    key: "timeoutMs",
    schema: z
      .int()
      .min(WEBHOOK_TIMEOUT_RANGE.min)
      .max(WEBHOOK_TIMEOUT_RANGE.max)
      .nullable()
      .describe("timeout of one attempt; null: WEBHOOK_TIMEOUT_MS"),
    toRule: numberOrNull,
    expected: "a number or null",
    rule: checkTimeoutMs,
    show: (w) => w.timeoutMs,
  }),
  field({
    name: "max_per_second",
    key: "maxPerSecond",
    schema: z.number().gt(0).max(10_000).nullable().describe("send-rate cap; null: no limit"),
    toRule: numberOrNull,
    expected: "a number or null",
    rule: checkMaxPerSecond,
    show: (w) => w.maxPerSecond,
  }),
  field({
    name: "ordered",
    key: "ordered",
    schema: z.boolean().describe("one delivery in flight per object, sent in the order queued"),
    toRule: (value) => value,
    expected: "true or false",
    rule: checkOrdered,
    show: (w) => w.ordered,
  }),
  field({
    name: "retry_schedule",
    key: "retrySchedule",
    schema: z
      .string()
      .describe(
        "when a failed attempt is retried: day (5s,5m,30m,2h,5h,10h,10h; a new webhook's), short (10 s doubling), none, or delays such as 5s,5m,30m,2h",
      ),
    toRule: text,
    expected: "a string",
    rule: checkRetrySchedule,
    show: (w) => formatRetrySchedule(w.retrySchedule),
  }),
  field({
    name: "enabled",
    key: "enabled",
    schema: z.boolean(),
    toRule: bool,
    expected: "true or false",
    rule: same,
    show: (w) => w.enabled,
  }),
];

/** The table by name. */
export const WEBHOOK_FIELD_BY_NAME: ReadonlyMap<string, WebhookField> = new Map(
  WEBHOOK_FIELDS.map((f) => [f.name, f]),
);

/** The table by stored key. */
export const WEBHOOK_FIELD_BY_KEY: ReadonlyMap<string, WebhookField> = new Map(
  WEBHOOK_FIELDS.map((f) => [f.key, f]),
);

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
  options: { required?: readonly string[]; answerOnly?: ReadonlySet<string> } = {},
): ReadWebhook {
  const problems: Record<string, string> = {};
  const patch: Partial<NewWebhook> = {};
  for (const [name, value] of Object.entries(body)) {
    const spec = WEBHOOK_FIELD_BY_NAME.get(name);
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
  options: { masked?: boolean } = {},
): Record<string, unknown> {
  const shown: Record<string, unknown> = {};
  for (const spec of WEBHOOK_FIELDS) {
    const value = options.masked && spec.masked ? spec.masked(webhook) : spec.show(webhook);
    if (value !== undefined) shown[spec.name] = value;
  }
  return shown;
}
