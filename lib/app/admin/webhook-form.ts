import { z } from "zod";
import type { FieldErrors } from "../../inventory/schemas.ts";
import { fieldErrorsOf } from "../../inventory/schemas.ts";
import { ConditionError, parseConditionText } from "../../webhooks/conditions.ts";
import { ALL_EVENTS, ITEM_EVENTS, type NewWebhook, type Webhook } from "../../webhooks/model.ts";
import { isValidSecret } from "../../webhooks/signing.ts";
import { isTemplated, templateProblem } from "../../webhooks/template.ts";
import {
  headerValueProblem,
  MAX_OPTION_TEXT,
  RESERVED_HEADERS,
  templatedUrlProblem,
  WEBHOOK_METHODS,
  WEBHOOK_TIMEOUT_RANGE,
  webhookNameProblem,
} from "../../webhooks/validate.ts";

export { WEBHOOK_METHODS };
export const EVENT_CHOICES: readonly string[] = [ALL_EVENTS, ...ITEM_EVENTS];

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

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
}

export function emptyWebhookForm(): WebhookFormValues {
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
  };
}

export function webhookFormValues(webhook: Webhook): WebhookFormValues {
  return {
    name: webhook.name,
    url: webhook.url,
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
  };
}

const webhookFormSchema = z.object({
  name: z
    .string()
    .trim()
    .min(1, "Required")
    .max(100, "Must be at most 100 characters")
    .superRefine((v, ctx) => {
      const problem = webhookNameProblem(v);
      if (problem !== null) ctx.addIssue({ code: "custom", message: problem });
    }),
  url: z
    .string()
    .trim()
    .min(1, "Required")
    .max(2000, "Must be at most 2000 characters")
    .superRefine((url, ctx) => {
      const problem = isTemplated(url)
        ? templatedUrlProblem(url)
        : isHttpUrl(url)
          ? null
          : "Must be an http:// or https:// URL";
      if (problem !== null) ctx.addIssue({ code: "custom", message: capitalised(problem) });
    }),
  method: z.enum(WEBHOOK_METHODS, { error: `Must be one of ${WEBHOOK_METHODS.join(", ")}` }),
  contentType: z
    .string()
    .trim()
    .regex(
      /^[\w.+-]+\/[\w.+-]+(\s*;\s*[\w.+-]+=[\w.+-]+)*$/,
      "Must be a media type such as application/json",
    ),
  headers: z.string().transform((text, ctx) => {
    const parsed = parseHeaderLines(text);
    if (typeof parsed === "string") {
      ctx.addIssue({ code: "custom", message: parsed });
      return z.NEVER;
    }
    return parsed;
  }),
  events: z
    .array(z.enum(EVENT_CHOICES as [string, ...string[]], { error: "Unknown event" }))
    .min(1, "Choose at least one event")
    .transform((events) => (events.includes(ALL_EVENTS) ? [ALL_EVENTS] : events)),
  secret: z
    .string()
    .trim()
    .refine(
      (v) => v === "" || isValidSecret(v),
      "Must be whsec_ followed by base64 of 16 to 64 bytes; leave empty to generate one",
    ),
  removeSecret: z.boolean(),
  maxPerSecond: z
    .string()
    .trim()
    .refine((v) => v === "" || (/^\d+(\.\d+)?$/.test(v) && Number(v) > 0 && Number(v) <= 10_000), {
      message: "Must be a number above 0 and at most 10000, or empty for no limit",
    })
    .transform((v) => (v === "" ? null : Number(v))),
  enabled: z.boolean(),
  bodyTemplate: z
    .string()
    .max(MAX_OPTION_TEXT, `Must be at most ${MAX_OPTION_TEXT} characters`)
    .transform((text, ctx) => {
      if (text.trim() === "") return null;
      const problem = templateProblem(text);
      if (problem !== null) {
        ctx.addIssue({ code: "custom", message: `Template error at ${problem.message}` });
        return z.NEVER;
      }
      return text;
    }),
  conditions: z
    .string()
    .max(MAX_OPTION_TEXT, `Must be at most ${MAX_OPTION_TEXT} characters`)
    .transform((text, ctx) => {
      if (text.trim() === "") return null;
      try {
        return parseConditionText(text);
      } catch (error) {
        if (!(error instanceof ConditionError)) throw error;
        ctx.addIssue({ code: "custom", message: `At ${error.message}` });
        return z.NEVER;
      }
    }),
  sslVerification: z.boolean(),
  caFile: z
    .string()
    .trim()
    .max(1000, "Must be at most 1000 characters")
    .refine((v) => v === "" || v.startsWith("/"), "Must be an absolute path to a PEM file")
    // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters.
    .refine((v) => !/[\u0000-\u001f\u007f]/.test(v), "Must not contain control characters")
    .transform((v) => (v === "" ? null : v)),
  timeoutMs: z
    .string()
    .trim()
    .refine(
      (v) =>
        v === "" ||
        (/^\d+$/.test(v) &&
          Number(v) >= WEBHOOK_TIMEOUT_RANGE.min &&
          Number(v) <= WEBHOOK_TIMEOUT_RANGE.max),
      `Must be a whole number from ${WEBHOOK_TIMEOUT_RANGE.min} to ${WEBHOOK_TIMEOUT_RANGE.max}, or empty for WEBHOOK_TIMEOUT_MS`,
    )
    .transform((v) => (v === "" ? null : Number(v))),
});

export type ParsedWebhookForm =
  | {
      ok: true;
      webhook: Required<Omit<NewWebhook, "secret">>;
      /** The new secret typed in, "" when none was (create: generate one; edit: keep). */
      secret: string;
      removeSecret: boolean;
    }
  | { ok: false; errors: FieldErrors };

export function parseWebhookForm(values: WebhookFormValues): ParsedWebhookForm {
  const result = webhookFormSchema.safeParse(values);
  if (!result.success) return { ok: false, errors: fieldErrorsOf(result.error) };
  const { secret, removeSecret, ...webhook } = result.data;
  return { ok: true, webhook, secret, removeSecret };
}

/** `Name: Value` per line (NetBox's additional headers); blank lines are skipped. */
export function parseHeaderLines(text: string): Array<[string, string]> | string {
  const headers: Array<[string, string]> = [];
  const lines = text.split(/\r?\n/);
  for (const [index, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === "") continue;
    const colon = line.indexOf(":");
    const name = colon > 0 ? line.slice(0, colon).trim() : "";
    const value = colon > 0 ? line.slice(colon + 1).trim() : "";
    if (!HEADER_NAME.test(name)) return `Line ${index + 1}: expected Name: Value`;
    if (RESERVED_HEADERS.has(name.toLowerCase())) {
      return `Line ${index + 1}: ${name} is set by the sender and can not be replaced`;
    }
    const problem = headerValueProblem(value);
    if (problem !== null) return `Line ${index + 1}: ${problem}`;
    headers.push([name, value]);
  }
  return headers;
}

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "";
  } catch {
    return false;
  }
}
