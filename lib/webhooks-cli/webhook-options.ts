import { UsageError } from "../config/errors.ts";
import { escapeControl } from "../text/control.ts";
import { errorMessage } from "../text/error-message.ts";
import type { SaveRefusal } from "../webhooks/definition/save.ts";
import {
  checkBodyTemplate,
  checkCaFile,
  checkConditions,
  checkRetrySchedule,
  checkTimeoutMs,
  shown,
} from "../webhooks/definition/validate.ts";
import type { NewWebhook, Webhook, WebhookPatch } from "../webhooks/model.ts";
import { DEFAULT_RETRY_SCHEDULE, formatRetrySchedule } from "../webhooks/policy/retry-schedule.ts";
import { field, flagValue } from "./field-flags.ts";
import { oneLine } from "./format.ts";
import { readOptionFile } from "./option-file.ts";

/** Flags of NetBox's webhook options, shared by `add` and `update`. */
export const optionArgs = {
  "body-template": {
    type: "string",
    description: "Jinja2 template of the request body, or @FILE",
    valueHint: "tmpl|@file",
  },
  condition: {
    type: "string",
    description:
      'condition set, e.g. {"and": [{"attr": "quantity", "op": "lt", "value": 5}]}, or @FILE',
    valueHint: "json|@file",
  },
  "ssl-verify": {
    type: "boolean",
    description: "verify the receiver's TLS certificate; --no-ssl-verify turns it off",
  },
  "ca-file": {
    type: "string",
    description: "PEM file of the CA(s) to trust for this webhook (none: the system's)",
    valueHint: "path",
  },
  "timeout-ms": {
    type: "string",
    description: "timeout of one attempt for this webhook (0: WEBHOOK_TIMEOUT_MS)",
    valueHint: "ms",
  },
  ordered: {
    type: "boolean",
    description:
      "send each object's changes one at a time, in commit order; --no-ordered turns it off",
  },
  "retry-schedule": {
    type: "string",
    description:
      "when a failed attempt is retried: day (5s,5m,30m,2h,5h,10h,10h; a new webhook's), short (10 s doubling), none, or delays such as 5s,5m,30m,2h",
    valueHint: "schedule",
  },
} as const;

/** Flags `update` has to clear a template or a condition set. */
export const clearOptionArgs = {
  "clear-body-template": { type: "boolean", description: "send the default JSON body again" },
  "clear-condition": { type: "boolean", description: "queue every subscribed change again" },
} as const;

type OptionPatch = Pick<
  WebhookPatch,
  | "bodyTemplate"
  | "conditions"
  | "sslVerification"
  | "caFile"
  | "timeoutMs"
  | "ordered"
  | "retrySchedule"
>;

/**
 * The options given on the command line, checked (one-line UsageError each). A value starting
 * with @ names a file to read the template or condition set from. Whether a CA file is a
 * readable PEM file is saveWebhook's question.
 */
export function readOptionFlags(
  flags: Record<string, unknown>,
  readFile: (path: string) => string = readOptionFile,
): OptionPatch {
  const patch: OptionPatch = {};
  const hidden = { echo: false };
  const template = valueOrFile(flags["body-template"], "body-template", readFile);
  if (template !== undefined) {
    patch.bodyTemplate = flagValue("body-template", template, checkBodyTemplate(template), hidden);
  }
  const condition = valueOrFile(flags.condition, "condition", readFile);
  if (condition !== undefined) {
    patch.conditions = flagValue("condition", condition, checkConditions(condition), hidden);
  }
  for (const [flag, key] of [
    ["clear-body-template", "bodyTemplate"],
    ["clear-condition", "conditions"],
  ] as const) {
    if (flags[flag] !== true) continue;
    if (patch[key] !== undefined) {
      throw new UsageError(`Give either --${flag} or --${flag.slice(6)}, not both`);
    }
    patch[key] = null;
  }
  if (typeof flags["ssl-verify"] === "boolean") patch.sslVerification = flags["ssl-verify"];
  if (typeof flags.ordered === "boolean") patch.ordered = flags.ordered;
  if (flags["ca-file"] !== undefined) {
    const given = String(flags["ca-file"]);
    patch.caFile = field("ca-file", given, checkCaFile);
  }
  if (flags["timeout-ms"] !== undefined) {
    const given = String(flags["timeout-ms"]);
    patch.timeoutMs = field("timeout-ms", given, checkTimeoutMs);
  }
  if (flags["retry-schedule"] !== undefined) {
    const given = String(flags["retry-schedule"]);
    patch.retrySchedule = field("retry-schedule", given, checkRetrySchedule);
  }
  return patch;
}

function valueOrFile(
  value: unknown,
  flag: string,
  readFile: (path: string) => string,
): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value.trim() === "") {
    throw new UsageError(`--${flag} needs a value`);
  }
  if (!value.startsWith("@")) return value;
  const path = value.slice(1);
  try {
    return readFile(path);
  } catch (error) {
    const code = (error as { code?: string }).code ?? errorMessage(error);
    throw new UsageError(
      `Cannot read --${flag} file ${escapeControl(JSON.stringify(path))}: ${code}; expected @ followed by a readable file`,
    );
  }
}

/** The flag of each field a save can refuse. */
const SAVE_FLAGS: Partial<Record<keyof NewWebhook, string>> = {
  url: "url",
  caFile: "ca-file",
  bodyTemplate: "body-template",
  headers: "header",
};

/** A save's refusal (saveWebhook) as the one-line UsageError of its flag, exit 2. */
export function refuseSave(refusal: SaveRefusal): never {
  const flag = SAVE_FLAGS[refusal.key] ?? refusal.key;
  const value = refusal.given === undefined ? "" : ` ${shown(refusal.given)}`;
  throw new UsageError(`Invalid --${flag}${value}: ${refusal.problem}`);
}

/** The options that differ from the defaults, as short phrases for listings. */
export function optionNotes(webhook: Webhook): string[] {
  const notes: string[] = [];
  if (webhook.bodyTemplate !== null) {
    const lines = webhook.bodyTemplate.split("\n").length;
    notes.push(`body template (${lines} ${lines === 1 ? "line" : "lines"})`);
  }
  if (webhook.conditions !== null) {
    notes.push(`condition ${oneLine(cut(JSON.stringify(webhook.conditions), 120))}`);
  }
  if (!webhook.sslVerification) notes.push("TLS verification off");
  if (webhook.caFile !== null) notes.push(`CA file ${oneLine(webhook.caFile)}`);
  if (webhook.timeoutMs !== null) notes.push(`timeout ${webhook.timeoutMs} ms`);
  if (webhook.ordered) notes.push("ordered per object");
  if (webhook.retrySchedule !== DEFAULT_RETRY_SCHEDULE) {
    notes.push(`retries ${formatRetrySchedule(webhook.retrySchedule)}`);
  }
  return notes;
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
