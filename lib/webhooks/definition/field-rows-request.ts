import { z } from "zod";
import { MASKED_PASSWORD, maskUrlPassword, maskUrlSecrets } from "../../text/url-credentials.ts";
import { SUBSCRIBABLE_EVENTS } from "../events/events.ts";
import { ALL_EVENTS, ITEM_EVENTS, OPERATIONAL_EVENTS } from "../model.ts";
import { field, formText, jsonAs, orBlank, same, type WebhookFields } from "./field-faces.ts";
import {
  type Checked,
  checkContentType,
  checkEvents,
  checkHeader,
  checkHeaderLines,
  checkHeadersTotal,
  checkMaxPerSecond,
  checkMethod,
  checkName,
  checkSecret,
  checkUrl,
  MAX_NAME_LENGTH,
  WEBHOOK_METHODS,
} from "./validate.ts";

/**
 * The rows of the field table (field-table.ts) that say where and how a webhook sends: name,
 * URL, method, content type, headers, events, secret and send rate, in the form's order.
 */

/** `Name: Value` lines, as the API's `headers`; each by the header rule, a problem naming its item. */
function checkHeaderList(lines: string[]): Checked<Array<[string, string]>> {
  const headers: Array<[string, string]> = [];
  for (const [index, line] of lines.entries()) {
    const header = checkHeader(line.trim());
    if (!header.ok) return { ok: false, problem: `item ${index + 1}: ${header.problem}` };
    headers.push(header.value);
  }
  return checkHeadersTotal(headers);
}

export const REQUEST_FIELDS: WebhookFields = [
  field({
    name: "name",
    key: "name",
    schema: z.string().min(1).max(MAX_NAME_LENGTH).describe("unique name"),
    toRule: jsonAs.text,
    expected: "a string",
    rule: checkName,
    show: (w) => w.name,
    cli: {
      flag: "name",
      type: "string",
      description: "unique name",
      required: true,
      updateDescription: "new name",
    },
    form: {
      label: "Name",
      input: { kind: "text", required: true, maxlength: MAX_NAME_LENGTH },
      initial: "",
      value: (w) => w.name,
      toRule: formText,
    },
  }),
  field({
    name: "url",
    key: "url",
    schema: z
      .string()
      .describe(
        "payload URL, http or https; may be a Jinja2 template after the scheme. A password in it is answered as *** (user:***@host); sent back with the same scheme, user and host, *** keeps the stored one. A read-only token gets each query parameter's value as *** too",
      ),
    toRule: jsonAs.text,
    expected: "a string",
    rule: checkUrl,
    // Stored and sent as given; every answer masks the password (lib/text/url-credentials.ts).
    show: (w) => maskUrlPassword(w.url),
    masked: (w) => maskUrlSecrets(w.url),
    cli: {
      flag: "url",
      type: "string",
      description: "payload URL (http or https)",
      valueHint: "url",
      required: true,
    },
    form: {
      label: "Payload URL",
      hint: "Loopback and private addresses are refused when sending unless WEBHOOK_ALLOWED_HOSTS allows them. May use the template context after the scheme, e.g. `https://hooks.example/{{ model }}/{{ data.id }}`.",
      input: { kind: "text", inputmode: "url", required: true },
      initial: "",
      // A save given the *** back keeps the stored password (saveWebhook).
      value: (w) => maskUrlPassword(w.url),
      toRule: formText,
    },
  }),
  field({
    name: "method",
    key: "method",
    schema: z
      .enum([...WEBHOOK_METHODS, ...WEBHOOK_METHODS.map((m) => m.toLowerCase())])
      .describe("the request's method, in upper or lower case; answered in upper case"),
    toRule: jsonAs.text,
    expected: "a string",
    rule: checkMethod,
    show: (w) => w.method,
    cli: {
      flag: "method",
      type: "string",
      description: "POST, PUT, PATCH, DELETE or GET",
      valueHint: "method",
      addDefault: "[default POST]",
    },
    form: {
      label: "HTTP method",
      input: { kind: "select", options: WEBHOOK_METHODS },
      initial: "POST",
      value: (w) => w.method,
      toRule: formText,
    },
  }),
  field({
    name: "content_type",
    key: "contentType",
    schema: z.string().describe("Content-Type header, e.g. application/json"),
    toRule: jsonAs.text,
    expected: "a string",
    rule: checkContentType,
    show: (w) => w.contentType,
    cli: {
      flag: "content-type",
      type: "string",
      description: "Content-Type header",
      valueHint: "type",
      addDefault: "[default application/json]",
    },
    form: {
      label: "Content type",
      input: { kind: "text" },
      initial: "application/json",
      value: (w) => w.contentType,
      toRule: formText,
    },
  }),
  field({
    name: "headers",
    key: "headers",
    schema: z
      .array(z.string())
      .describe(
        "extra headers as 'Name: Value' lines, in order. A read-only token gets every value as *** ('Authorization: ***'): header values are where credentials go",
      ),
    toRule: jsonAs.strings,
    expected: "a list of 'Name: Value' strings",
    rule: checkHeaderList,
    show: (w) => w.headers.map(([name, value]) => `${name}: ${value}`),
    masked: (w) =>
      w.headers.map(([name, value]) => `${name}: ${value === "" ? "" : MASKED_PASSWORD}`),
    cli: {
      flag: "header",
      type: "string",
      description: "extra header 'Name: Value' (repeat for several)",
      valueHint: "'K: V'",
      repeat: {
        each: (line) => checkHeader(line),
        all: (headers) => checkHeadersTotal(headers as Array<[string, string]>),
      },
      clear: { flag: "clear-headers", description: "remove every extra header" },
    },
    form: {
      label: "Additional headers",
      hint: "One per line, as Name: Value. Values may be templates, e.g. `X-Item: {{ data.sku }}`.",
      input: { kind: "textarea" },
      initial: "",
      value: (w) => w.headers.map(([name, value]) => `${name}: ${value}`).join("\n"),
      rule: (value) => checkHeaderLines(formText(value)),
    },
  }),
  field({
    name: "events",
    key: "events",
    schema: z.array(z.enum(SUBSCRIBABLE_EVENTS as [string, ...string[]])).min(1),
    toRule: jsonAs.strings,
    expected: "a list of event names",
    rule: checkEvents,
    show: (w) => w.events,
    cli: {
      flag: "events",
      type: "string",
      description: `comma list of item.created, item.updated, item.deleted (* for all three), ${OPERATIONAL_EVENTS.join(", ")}`,
      valueHint: "list",
      addDefault: "[default *]",
      toRule: (text) => text.split(","),
    },
    form: {
      label: "Events",
      input: {
        kind: "checkboxes",
        choices: [
          [ALL_EVENTS, "all item events (*)"],
          ...[...ITEM_EVENTS, ...OPERATIONAL_EVENTS].map((e) => [e, e] as const),
        ],
      },
      initial: [ALL_EVENTS],
      value: (w) => w.events,
      toRule: (value) => (Array.isArray(value) ? value : []),
    },
  }),
  field({
    name: "secret",
    key: "secret",
    schema: z
      .string()
      .nullable()
      .describe("signing secret whsec_…; null sends unsigned requests. Write only: never shown"),
    toRule: jsonAs.textOrNull,
    expected: "a string or null",
    rule: (given: string) => (given === "" ? same(null) : checkSecret(given)),
    show: () => undefined,
    cli: {
      flag: "secret",
      type: "string",
      description: "signing secret whsec_…",
      addDefault: "(generated when left out)",
      hidden: true,
    },
    form: {
      label: "Secret",
      hint: (webhook) =>
        webhook
          ? `${webhook.secret ? "A secret is set." : "No secret is set."} Leave empty to keep it as it is; type a new whsec_ secret to replace it.`
          : "Leave empty to generate one; it is shown once, after saving.",
      input: { kind: "password", removable: "Remove the secret (requests are then sent unsigned)" },
      initial: "",
      value: () => "",
      toRule: formText,
    },
  }),
  field({
    name: "max_per_second",
    key: "maxPerSecond",
    schema: z.number().gt(0).max(10_000).nullable().describe("send-rate cap; null: no limit"),
    toRule: jsonAs.numberOrNull,
    expected: "a number or null",
    rule: checkMaxPerSecond,
    show: (w) => w.maxPerSecond,
    cli: {
      flag: "max-per-second",
      type: "string",
      description: "send at most this many deliveries a second, across all workers (0: no limit)",
      valueHint: "n",
      addDefault: "[default 0]",
    },
    form: {
      label: "Max deliveries per second",
      hint: "Empty for no limit. Honoured across all workers, spaced evenly; a 429 or 503 answer also pauses this webhook for its Retry-After.",
      input: { kind: "text", inputmode: "decimal" },
      initial: "",
      value: (w) => orBlank(w.maxPerSecond),
      toRule: formText,
    },
  }),
];
