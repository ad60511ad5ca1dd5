import { z } from "zod";
import {
  DEFAULT_FAILING_NOTICE_AFTER,
  MAX_FAILING_NOTICE_AFTER,
} from "../events/failing-notices.ts";
import { CONDITION_OPS } from "../model.ts";
import { DEFAULT_RETRY_SCHEDULE, formatRetrySchedule } from "../policy/retry-schedule.ts";
import { field, formText, jsonAs, orBlank, same, type WebhookFields } from "./field-faces.ts";
import {
  checkBodyTemplate,
  checkCaFile,
  checkClientCertFile,
  checkClientKeyFile,
  checkConditions,
  checkFailingNoticeAfter,
  checkOrdered,
  checkRetrySchedule,
  checkTimeoutMs,
  MAX_OPTION_TEXT,
  WEBHOOK_TIMEOUT_RANGE,
} from "./validate.ts";

/**
 * The rows of the field table (field-table.ts) of NetBox's webhook options and ours: body
 * template, conditions, TLS, timeout, ordering, retries, and whether it is enabled, in the
 * form's order. Each has a note in listings when it differs from the default.
 */

const conditionSchema = z
  .record(z.string(), z.unknown())
  .describe(
    `NetBox's condition set: {"and": [...]} or {"or": [...]} of {"attr", "value", "op" (${CONDITION_OPS.join(", ")}), "negate"}`,
  );

const RETRY_HELP =
  "when a failed attempt is retried: day (5s,5m,30m,2h,5h,10h,10h; a new webhook's), short (10 s doubling), none, or delays such as 5s,5m,30m,2h";

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

export const OPTION_FIELDS: WebhookFields = [
  field({
    name: "body_template",
    key: "bodyTemplate",
    schema: z
      .string()
      .max(MAX_OPTION_TEXT)
      .nullable()
      .describe("Jinja2 template of the body; null sends NetBox's JSON body"),
    toRule: jsonAs.textOrNull,
    expected: "a string or null",
    rule: checkBodyTemplate,
    show: (w) => w.bodyTemplate,
    cli: {
      flag: "body-template",
      type: "string",
      description: "Jinja2 template of the request body, or @FILE",
      valueHint: "tmpl|@file",
      addDefault: "(default: the JSON body)",
      hidden: true,
      file: true,
      clear: { flag: "clear-body-template", description: "send the default JSON body again" },
    },
    form: {
      label: "Body template",
      hint: 'Jinja2, given `event`, `timestamp`, `model`, `username`, `request_id`, `data` and `snapshots`. Empty sends the default JSON body. In JSON, insert values with `tojson`: `{"text": {{ data.name | tojson }}}`.',
      input: { kind: "textarea", rows: 6, code: true },
      initial: "",
      value: (w) => w.bodyTemplate ?? "",
      toRule: formText,
    },
    note: {
      short: (w) => (w.bodyTemplate !== null ? "body template" : null),
      long: (w) => {
        if (w.bodyTemplate === null) return null;
        const lines = w.bodyTemplate.split("\n").length;
        return `body template (${lines} ${lines === 1 ? "line" : "lines"})`;
      },
    },
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
    cli: {
      flag: "condition",
      type: "string",
      description:
        'condition set, e.g. {"and": [{"attr": "quantity", "op": "lt", "value": 5}]}, or @FILE',
      valueHint: "json|@file",
      hidden: true,
      file: true,
      clear: { flag: "clear-condition", description: "queue every subscribed change again" },
    },
    form: {
      label: "Conditions",
      hint: 'NetBox\'s condition set; empty queues every subscribed change. E.g. `{"and": [{"attr": "quantity", "op": "lt", "value": 5}]}`; ops eq, gt, gte, lt, lte, in, contains, regex; negate inverts. `prechange.quantity` reads the item before the change (absent on a creation).',
      input: { kind: "textarea", rows: 4, code: true },
      initial: "",
      value: (w) => (w.conditions === null ? "" : JSON.stringify(w.conditions, null, 2)),
      toRule: formText,
    },
    note: {
      short: (w) => (w.conditions !== null ? "conditions" : null),
      long: (w) =>
        w.conditions === null ? null : `condition ${cut(JSON.stringify(w.conditions), 120)}`,
    },
  }),
  field({
    name: "ssl_verify",
    key: "sslVerification",
    schema: z.boolean().describe("verify the receiver's TLS certificate"),
    toRule: jsonAs.bool,
    expected: "true or false",
    rule: same,
    show: (w) => w.sslVerification,
    cli: {
      flag: "ssl-verify",
      type: "boolean",
      description: "verify the receiver's TLS certificate; --no-ssl-verify turns it off",
      addDefault: "[default on]",
    },
    form: {
      label: "Do not verify the receiver's TLS certificate (NetBox's SSL verification off)",
      input: { kind: "checkbox", name: "skipSslVerification", inverted: true },
      initial: true,
      value: (w) => w.sslVerification,
      toRule: (value) => value === true,
    },
    note: {
      short: (w) => (w.sslVerification ? null : "TLS unverified"),
      long: (w) => (w.sslVerification ? null : "TLS verification off"),
    },
  }),
  field({
    name: "ca_file",
    key: "caFile",
    schema: z
      .string()
      .nullable()
      .describe("absolute path of a PEM file of CAs to trust; null: the system's"),
    toRule: jsonAs.textOrNull,
    expected: "a string or null",
    rule: checkCaFile,
    show: (w) => w.caFile,
    cli: {
      flag: "ca-file",
      type: "string",
      description: "PEM file of the CA(s) to trust for this webhook (none: the system's)",
      valueHint: "path",
    },
    form: {
      label: "CA file path",
      hint: "A PEM file on the worker's machine with the CA(s) to trust instead of the system's.",
      input: { kind: "text" },
      initial: "",
      value: (w) => w.caFile ?? "",
      toRule: formText,
    },
    note: {
      short: (w) => (w.caFile !== null ? "own CA" : null),
      long: (w) => (w.caFile !== null ? `CA file ${w.caFile}` : null),
    },
  }),
  field({
    name: "client_cert_file",
    key: "clientCertFile",
    schema: z
      .string()
      .nullable()
      .describe(
        "absolute path of the PEM client certificate sent to a receiver that asks for one (mutual TLS), with client_key_file; null: none",
      ),
    toRule: jsonAs.textOrNull,
    expected: "a string or null",
    rule: checkClientCertFile,
    show: (w) => w.clientCertFile,
    cli: {
      flag: "client-cert-file",
      type: "string",
      description: "PEM client certificate for receivers that ask for one (with --client-key-file)",
      valueHint: "path",
    },
    form: {
      label: "Client certificate file path",
      hint: "A PEM file on the worker's machine, presented to a receiver that asks for a client certificate (mutual TLS); with the key below.",
      input: { kind: "text" },
      initial: "",
      value: (w) => w.clientCertFile ?? "",
      toRule: formText,
    },
    note: {
      short: (w) => (w.clientCertFile !== null ? "client cert" : null),
      long: (w) => (w.clientCertFile !== null ? `client certificate ${w.clientCertFile}` : null),
    },
  }),
  field({
    name: "client_key_file",
    key: "clientKeyFile",
    schema: z
      .string()
      .nullable()
      .describe("absolute path of the client certificate's PEM private key; null: none"),
    toRule: jsonAs.textOrNull,
    expected: "a string or null",
    rule: checkClientKeyFile,
    show: (w) => w.clientKeyFile,
    cli: {
      flag: "client-key-file",
      type: "string",
      description: "PEM private key of --client-cert-file (unencrypted, readable by the worker)",
      valueHint: "path",
    },
    form: {
      label: "Client key file path",
      hint: "The certificate's private key, a PEM file readable by the worker (not encrypted).",
      input: { kind: "text" },
      initial: "",
      value: (w) => w.clientKeyFile ?? "",
      toRule: formText,
    },
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
    toRule: jsonAs.numberOrNull,
    expected: "a number or null",
    rule: checkTimeoutMs,
    show: (w) => w.timeoutMs,
    cli: {
      flag: "timeout-ms",
      type: "string",
      description: "timeout of one attempt for this webhook (0: WEBHOOK_TIMEOUT_MS)",
      valueHint: "ms",
    },
    form: {
      label: "Timeout (ms)",
      hint: "Of one attempt; empty uses WEBHOOK_TIMEOUT_MS.",
      input: { kind: "text", inputmode: "numeric" },
      initial: "",
      value: (w) => orBlank(w.timeoutMs),
      toRule: formText,
    },
    note: {
      short: (w) => (w.timeoutMs !== null ? `timeout ${w.timeoutMs} ms` : null),
      long: (w) => (w.timeoutMs !== null ? `timeout ${w.timeoutMs} ms` : null),
    },
  }),
  field({
    name: "ordered",
    key: "ordered",
    schema: z.boolean().describe("one delivery in flight per object, sent in the order queued"),
    toRule: (value) => value,
    expected: "true or false",
    rule: checkOrdered,
    show: (w) => w.ordered,
    cli: {
      flag: "ordered",
      type: "boolean",
      description:
        "send each object's changes one at a time, in commit order; --no-ordered turns it off",
      addDefault: "[default off]",
    },
    form: {
      label: "Ordered: send each item's changes one at a time, in the order they were made",
      hint: "A later change of an item waits while an earlier one is queued, being sent or waiting for a retry; other items never wait.",
      input: { kind: "checkbox" },
      initial: false,
      value: (w) => w.ordered,
    },
    note: {
      short: (w) => (w.ordered ? "ordered" : null),
      long: (w) => (w.ordered ? "ordered per object" : null),
    },
  }),
  field({
    name: "retry_schedule",
    key: "retrySchedule",
    schema: z.string().describe(RETRY_HELP),
    toRule: jsonAs.text,
    expected: "a string",
    rule: checkRetrySchedule,
    show: (w) => formatRetrySchedule(w.retrySchedule),
    cli: { flag: "retry-schedule", type: "string", description: RETRY_HELP, valueHint: "schedule" },
    form: {
      label: "Retry schedule",
      hint: "day (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h), short (10 s doubling, 5 attempts), none, or delays such as 5s,5m,30m,2h. WEBHOOK_MAX_ATTEMPTS caps every schedule.",
      input: { kind: "text" },
      initial: "day",
      value: (w) => formatRetrySchedule(w.retrySchedule),
      toRule: formText,
    },
    note: {
      short: (w) =>
        w.retrySchedule !== DEFAULT_RETRY_SCHEDULE
          ? `retries: ${formatRetrySchedule(w.retrySchedule)}`
          : null,
      long: (w) =>
        w.retrySchedule !== DEFAULT_RETRY_SCHEDULE
          ? `retries ${formatRetrySchedule(w.retrySchedule)}`
          : null,
    },
  }),
  field({
    name: "failing_notice_after",
    key: "failingNoticeAfter",
    schema: z
      .int()
      .min(0)
      .max(MAX_FAILING_NOTICE_AFTER)
      .describe(
        `which failed attempt of a delivery announces webhook.failing to the other webhooks that name it, once until the next success (webhook.recovered); 0: never; ${DEFAULT_FAILING_NOTICE_AFTER} by default`,
      ),
    toRule: (value) =>
      typeof value === "number" && Number.isInteger(value) ? String(value) : undefined,
    expected: "a whole number",
    rule: checkFailingNoticeAfter,
    show: (w) => w.failingNoticeAfter,
    cli: {
      flag: "failing-notice-after",
      type: "string",
      description: `announce webhook.failing at a delivery's Nth failed attempt, once until a success (0: never)`,
      valueHint: "n",
      addDefault: `[default ${DEFAULT_FAILING_NOTICE_AFTER}]`,
    },
    form: {
      label: "Failing notice after attempt",
      hint: `Other webhooks that name webhook.failing hear of it at a delivery's failed attempt of this number (${DEFAULT_FAILING_NOTICE_AFTER}: about 35 min into the day schedule), once until a success sends webhook.recovered; 0 for never.`,
      input: { kind: "text", inputmode: "numeric" },
      initial: String(DEFAULT_FAILING_NOTICE_AFTER),
      value: (w) => String(w.failingNoticeAfter),
      toRule: formText,
    },
    note: {
      short: (w) =>
        w.failingNoticeAfter !== DEFAULT_FAILING_NOTICE_AFTER
          ? w.failingNoticeAfter === 0
            ? "no failing notice"
            : `failing notice at attempt ${w.failingNoticeAfter}`
          : null,
      long: (w) =>
        w.failingNoticeAfter !== DEFAULT_FAILING_NOTICE_AFTER
          ? w.failingNoticeAfter === 0
            ? "no failing notice"
            : `failing notice at attempt ${w.failingNoticeAfter}`
          : null,
    },
  }),
  field({
    name: "enabled",
    key: "enabled",
    schema: z.boolean(),
    toRule: jsonAs.bool,
    expected: "true or false",
    rule: same,
    show: (w) => w.enabled,
    // enable and disable are commands of their own; add has --disabled.
    cli: {
      flag: "disabled",
      type: "boolean",
      description: "create it disabled",
      inverted: true,
      addOnly: true,
    },
    form: {
      label: "Enabled",
      input: { kind: "checkbox" },
      initial: true,
      value: (w) => w.enabled,
      toRule: (value) => value === true,
    },
  }),
];
