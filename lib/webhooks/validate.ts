import { UsageError } from "../config/errors.ts";
import { escapeControl, invisibleCharacter } from "../text/control.ts";
import { ConditionError, parseConditionText } from "./conditions.ts";
import { isSubscribableEvent, SUBSCRIBABLE_EVENTS } from "./events.ts";
import { ALL_EVENTS, type ConditionSet } from "./model.ts";
import { isValidSecret } from "./signing.ts";
import { isTemplated, templateProblem } from "./template.ts";

/**
 * Checks of webhook fields typed by a person (CLI flags), each throwing a one-line UsageError.
 * The rules match the admin form's (lib/app/admin/webhook-form.ts).
 */

export const WEBHOOK_METHODS = ["POST", "PUT", "PATCH", "DELETE", "GET"] as const;

/** Headers the sender sets itself; an extra header must not replace them. */
export const RESERVED_HEADERS: ReadonlySet<string> = new Set([
  "host",
  "content-length",
  "content-type",
  "transfer-encoding",
  "connection",
  "webhook-id",
  "webhook-timestamp",
  "webhook-signature",
  "x-hook-signature",
]);

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const MEDIA_TYPE = /^[\w.+-]+\/[\w.+-]+(\s*;\s*[\w.+-]+=[\w.+-]+)*$/;

function shown(value: string): string {
  return escapeControl(JSON.stringify(value));
}

export function checkName(name: string): string {
  const trimmed = name.trim();
  const invisible = invisibleCharacter(trimmed);
  if (trimmed === "" || trimmed.length > 100 || invisible !== null) {
    const found = invisible === null ? "" : ` (${invisible} found)`;
    throw new UsageError(
      `Invalid webhook name ${shown(name)}: expected 1 to 100 characters without control or invisible characters${found}`,
    );
  }
  return trimmed;
}

/** The problem with a webhook name typed into the admin, or null (the rules of checkName). */
export function webhookNameProblem(name: string): string | null {
  const invisible = invisibleCharacter(name);
  return invisible === null
    ? null
    : `Must not contain control or invisible characters (${invisible} found)`;
}

/**
 * Why a header value can never be sent, or null. fetch sends header values as bytes and
 * refuses any character above U+00FF, and servers read anything outside ASCII differently,
 * so only printable ASCII (and tabs) is accepted: every attempt would fail otherwise.
 */
export function sendableHeaderProblem(value: string): string | null {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters.
  if (/[\u0000-\u0008\u000a-\u001f\u007f]/.test(value)) {
    return "the value contains control characters";
  }
  const other = /[^\t\u0020-\u007e]/.exec(value)?.[0];
  if (other !== undefined) {
    const code = `U+${(other.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;
    return `the value can not be sent in an HTTP header: only ASCII is allowed (${code} ${JSON.stringify(other)} found); percent-encode or base64 such text`;
  }
  return null;
}

/** Why a header value typed into a webhook is refused (a template must parse), or null. */
export function headerValueProblem(value: string): string | null {
  const problem = isTemplated(value) ? templateProblem(value) : null;
  return problem === null ? sendableHeaderProblem(value) : `template error at ${problem.message}`;
}

/** The longest webhook URL, typed or rendered from a template. */
const MAX_URL_LENGTH = 2000;

/** Whether `url` (trimmed) can be a webhook's address: http(s), a host, at most 2000 characters. */
export function isWebhookUrl(url: string): boolean {
  if (url.length > MAX_URL_LENGTH) return false;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  return (parsed.protocol === "http:" || parsed.protocol === "https:") && parsed.hostname !== "";
}

export function checkUrl(url: string): string {
  const trimmed = url.trim();
  if (isTemplated(trimmed)) {
    const problem = templatedUrlProblem(trimmed);
    if (problem !== null) throw new UsageError(`Invalid URL ${shown(url)}: ${problem}`);
    return trimmed;
  }
  if (!isWebhookUrl(trimmed)) {
    throw new UsageError(
      `Invalid URL ${shown(url)}: expected an http:// or https:// URL, e.g. http://127.0.0.1:9000/`,
    );
  }
  return trimmed;
}

export function checkMethod(method: string): string {
  const upper = method.trim().toUpperCase();
  if (!(WEBHOOK_METHODS as readonly string[]).includes(upper)) {
    throw new UsageError(
      `Invalid method ${shown(method)}: expected one of ${WEBHOOK_METHODS.join(", ")}`,
    );
  }
  return upper;
}

export function checkContentType(contentType: string): string {
  const trimmed = contentType.trim();
  if (!MEDIA_TYPE.test(trimmed)) {
    throw new UsageError(
      `Invalid content type ${shown(contentType)}: expected a media type such as application/json`,
    );
  }
  return trimmed;
}

/** `Name: Value`, as NetBox's additional headers. */
export function checkHeader(line: string): [string, string] {
  const colon = line.indexOf(":");
  const name = colon > 0 ? line.slice(0, colon).trim() : "";
  const value = colon > 0 ? line.slice(colon + 1).trim() : "";
  if (!HEADER_NAME.test(name)) {
    throw new UsageError(`Invalid header ${shown(line)}: expected 'Name: Value'`);
  }
  if (RESERVED_HEADERS.has(name.toLowerCase())) {
    throw new UsageError(`Invalid header ${shown(line)}: ${name} is set by the sender`);
  }
  const problem = headerValueProblem(value);
  if (problem !== null) throw new UsageError(`Invalid header ${shown(line)}: ${problem}`);
  return [name, value];
}

/** A comma list of event names; "*" alone stands for all of them. */
export function checkEvents(list: string): string[] {
  const events = [
    ...new Set(
      list
        .split(",")
        .map((e) => e.trim())
        .filter((e) => e !== ""),
    ),
  ];
  const unknown = events.find((event) => !isSubscribableEvent(event));
  if (events.length === 0 || unknown !== undefined) {
    throw new UsageError(
      `${unknown === undefined ? "No events given" : `Unknown event ${shown(unknown)}`}: expected a comma list of ${SUBSCRIBABLE_EVENTS.join(", ")}`,
    );
  }
  return events.includes(ALL_EVENTS) ? [ALL_EVENTS] : events;
}

export function checkSecret(secret: string): string {
  if (!isValidSecret(secret.trim())) {
    throw new UsageError(
      "Invalid secret: expected whsec_ followed by base64 of 16 to 64 bytes (leave --secret out to generate one)",
    );
  }
  return secret.trim();
}

/** A send-rate cap per second: a number above 0 up to 10000 (as the admin form); 0 or none: no limit. */
export function checkMaxPerSecond(value: string): number | null {
  const trimmed = value.trim().toLowerCase();
  if (trimmed === "0" || trimmed === "none") return null;
  const rate = Number(trimmed);
  if (!/^\d+(\.\d+)?$/.test(trimmed) || !(rate > 0) || rate > 10_000) {
    throw new UsageError(
      `Invalid --max-per-second ${shown(value)}: expected a number above 0 and at most 10000, or 0 for no limit`,
    );
  }
  return rate;
}

/**
 * A URL with template parts (NetBox's payload URL is a Jinja2 template): it must parse and
 * start with its scheme, so only the rest can vary; the rendered URL is checked again at enqueue
 * and by the SSRF guard when sent. Null when fine.
 */
export function templatedUrlProblem(url: string): string | null {
  if (!/^https?:\/\/[^/{]/i.test(url) || url.length > MAX_URL_LENGTH) {
    return "expected an http:// or https:// URL; a template may fill in the parts after the scheme";
  }
  const problem = templateProblem(url);
  return problem === null ? null : `template error at ${problem.message}`;
}

/** The longest body template or condition set accepted (both live in every claim's webhook row). */
export const MAX_OPTION_TEXT = 65_536;

/** A Jinja2 body template; blank means NetBox's default JSON body (null). */
export function checkBodyTemplate(text: string): string | null {
  if (text.trim() === "") return null;
  if (text.length > MAX_OPTION_TEXT) {
    throw new UsageError(`Invalid --body-template: longer than ${MAX_OPTION_TEXT} characters`);
  }
  const problem = templateProblem(text);
  if (problem !== null) {
    throw new UsageError(`Invalid --body-template: template error at ${problem.message}`);
  }
  return text;
}

/** A condition set in NetBox's JSON format; blank means none (null). */
export function checkConditions(text: string): ConditionSet | null {
  if (text.trim() === "") return null;
  if (text.length > MAX_OPTION_TEXT) {
    throw new UsageError(`Invalid --condition: longer than ${MAX_OPTION_TEXT} characters`);
  }
  try {
    return parseConditionText(text);
  } catch (error) {
    if (error instanceof ConditionError) {
      throw new UsageError(`Invalid --condition at ${error.message}`);
    }
    throw error;
  }
}

/** The path of a PEM file of CA certificates; read when sending. "none" or blank clears it. */
export function checkCaFile(path: string): string | null {
  const trimmed = path.trim();
  if (trimmed === "" || trimmed.toLowerCase() === "none") return null;
  if (!trimmed.startsWith("/") || invisibleCharacter(trimmed) !== null || trimmed.length > 1000) {
    throw new UsageError(
      `Invalid --ca-file ${shown(path)}: expected an absolute path to a PEM file, e.g. /etc/ssl/certs/my-ca.pem`,
    );
  }
  return trimmed;
}

/** Timeout bounds of one attempt, the same as WEBHOOK_TIMEOUT_MS's. */
export const WEBHOOK_TIMEOUT_RANGE = { min: 100, max: 300_000 } as const;

/** A per-webhook timeout in ms; 0 or "none" falls back to WEBHOOK_TIMEOUT_MS (null). */
export function checkTimeoutMs(value: string): number | null {
  const trimmed = value.trim().toLowerCase();
  if (trimmed === "0" || trimmed === "none") return null;
  const ms = Number(trimmed);
  const { min, max } = WEBHOOK_TIMEOUT_RANGE;
  if (!/^\d+$/.test(trimmed) || ms < min || ms > max) {
    throw new UsageError(
      `Invalid --timeout-ms ${shown(value)}: expected a whole number of milliseconds from ${min} to ${max}, or 0 for WEBHOOK_TIMEOUT_MS`,
    );
  }
  return ms;
}
