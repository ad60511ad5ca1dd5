import { escapeControl, invisibleCharacter, invisibleCharacterAt } from "../../text/control.ts";
import { hasMaskedPassword, MASKED_PASSWORD } from "../../text/url-credentials.ts";
import { isSubscribableEvent, SUBSCRIBABLE_EVENTS } from "../events/events.ts";
import {
  DEFAULT_FAILING_NOTICE_AFTER,
  MAX_FAILING_NOTICE_AFTER,
} from "../events/failing-notices.ts";
import { ALL_EVENTS, type ConditionSet } from "../model.ts";
import { parseRetrySchedule, type RetrySchedule } from "../policy/retry-schedule.ts";
import { ConditionError, parseConditionText } from "../rendering/conditions.ts";
import { isTemplated, templateProblem } from "../rendering/template.ts";
import { isValidSecret } from "../sending/signing.ts";
import { MAX_GRACE_SECONDS } from "./rotation.ts";

/**
 * The rules of a webhook's fields as typed by a person, once: one check per field, giving the
 * value to store or the problem in a short lower-case phrase. The CLI (lib/webhooks-cli) turns a
 * problem into a one-line exit 2 naming the flag, the admin form (lib/app/admin/webhooks/webhook-form.ts)
 * into an inline error under the field. Checks that read a file are in ca-file.ts.
 */

export type Checked<T> = { ok: true; value: T } | { ok: false; problem: string };

function ok<T>(value: T): Checked<T> {
  return { ok: true, value };
}

function refused(problem: string): { ok: false; problem: string } {
  return { ok: false, problem };
}

/** A value quoted for a message: JSON quotes, control characters escaped. */
export function shown(value: string): string {
  return escapeControl(JSON.stringify(value));
}

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
export const MAX_NAME_LENGTH = 100;
/** The longest webhook URL, typed or rendered from a template. */
const MAX_URL_LENGTH = 2000;
/** The longest body template or condition set accepted (both live in every claim's webhook row). */
export const MAX_OPTION_TEXT = 65_536;
const MAX_PATH_LENGTH = 1000;
/**
 * All of a webhook's extra headers together, typed or rendered (name, value and line breaks):
 * HTTP servers refuse larger header sections (nginx's default buffers hold 32 KiB, Node's 16).
 */
export const MAX_HEADER_BYTES = 65_536;
/** Timeout bounds of one attempt, the same as WEBHOOK_TIMEOUT_MS's. */
export const WEBHOOK_TIMEOUT_RANGE = { min: 100, max: 300_000 } as const;

export function checkName(text: string): Checked<string> {
  const name = text.trim();
  if (name === "") return refused("required");
  if (name.length > MAX_NAME_LENGTH) {
    return refused(`must be at most ${MAX_NAME_LENGTH} characters`);
  }
  const invisible = invisibleCharacter(name);
  if (invisible !== null) {
    return refused(`must not contain control or invisible characters (${invisible} found)`);
  }
  return ok(name);
}

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

/**
 * A payload URL. With template parts (NetBox's payload URL is a Jinja2 template) it must parse
 * and start with its scheme, so only the rest can vary; the rendered URL is checked again at
 * enqueue and by the SSRF guard when sent.
 */
export function checkUrl(text: string): Checked<string> {
  const url = text.trim();
  if (url === "") return refused("required");
  if (url.length > MAX_URL_LENGTH) return refused(`must be at most ${MAX_URL_LENGTH} characters`);
  // WHATWG URL parsing drops tabs and line breaks silently, so they would pass below unseen.
  const invisible = invisibleCharacterAt(url);
  if (invisible !== null) {
    const position = text.indexOf(url) + invisible.position;
    return refused(
      `must not contain control or invisible characters (${invisible.code} at character ${position})`,
    );
  }
  if (isTemplated(url)) {
    if (!/^https?:\/\/[^/{]/i.test(url)) {
      return refused(
        "must be an http:// or https:// URL; a template may fill in the parts after the scheme",
      );
    }
    const problem = templateProblem(url);
    return problem === null ? ok(url) : refused(`template error at ${problem.message}`);
  }
  return isWebhookUrl(url)
    ? ok(url)
    : refused("must be an http:// or https:// URL, e.g. http://127.0.0.1:9000/");
}

/**
 * A new webhook's URL: checkUrl's rule, and its password may not be the mask, which answers
 * show for a stored password; saved as given, `***` would be sent as the password itself.
 */
export function checkNewUrl(text: string): Checked<string> {
  const url = checkUrl(text);
  if (!url.ok) return url;
  return hasMaskedPassword(url.value)
    ? refused(
        `must not have ${MASKED_PASSWORD} as its password: that is how a stored password is shown; type the password itself`,
      )
    : url;
}

export function checkMethod(text: string): Checked<string> {
  const method = text.trim().toUpperCase();
  return (WEBHOOK_METHODS as readonly string[]).includes(method)
    ? ok(method)
    : refused(`must be one of ${WEBHOOK_METHODS.join(", ")}`);
}

export function checkContentType(text: string): Checked<string> {
  const type = text.trim();
  return MEDIA_TYPE.test(type)
    ? ok(type)
    : refused("must be a media type such as application/json");
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

/** One `Name: Value` line, as NetBox's additional headers. */
export function checkHeader(line: string): Checked<[string, string]> {
  const colon = line.indexOf(":");
  const name = colon > 0 ? line.slice(0, colon).trim() : "";
  const value = colon > 0 ? line.slice(colon + 1).trim() : "";
  if (!HEADER_NAME.test(name)) return refused("expected Name: Value");
  if (RESERVED_HEADERS.has(name.toLowerCase())) {
    return refused(`${name} is set by the sender and can not be replaced`);
  }
  const problem = headerValueProblem(value);
  return problem === null ? ok([name, value]) : refused(problem);
}

/** Header lines as typed in a text area; blank lines are skipped, a problem names its line. */
export function checkHeaderLines(text: string): Checked<Array<[string, string]>> {
  const headers: Array<[string, string]> = [];
  for (const [index, raw] of text.split(/\r?\n/).entries()) {
    if (raw.trim() === "") continue;
    const header = checkHeader(raw.trim());
    if (!header.ok) return refused(`line ${index + 1}: ${header.problem}`);
    headers.push(header.value);
  }
  return checkHeadersTotal(headers);
}

/** The size of header lines as sent: `Name: Value` and CRLF each. */
export function headerBytes(headers: ReadonlyArray<readonly [string, string]>): number {
  return headers.reduce((sum, [name, value]) => sum + name.length + value.length + 4, 0);
}

/** Every header together within MAX_HEADER_BYTES (each line alone may pass and all fail). */
export function checkHeadersTotal(
  headers: Array<[string, string]>,
): Checked<Array<[string, string]>> {
  const bytes = headerBytes(headers);
  return bytes <= MAX_HEADER_BYTES
    ? ok(headers)
    : refused(`the headers are ${bytes} bytes in all: at most ${MAX_HEADER_BYTES}`);
}

/** Event names (a CLI comma list split, or the form's ticks); "*" alone stands for all of them. */
export function checkEvents(given: readonly string[]): Checked<string[]> {
  const events = [...new Set(given.map((e) => e.trim()).filter((e) => e !== ""))];
  if (events.length === 0) return refused("choose at least one event");
  const unknown = events.find((event) => !isSubscribableEvent(event));
  if (unknown !== undefined) {
    return refused(`unknown event ${shown(unknown)}: expected ${SUBSCRIBABLE_EVENTS.join(", ")}`);
  }
  return ok(events.includes(ALL_EVENTS) ? [ALL_EVENTS] : events);
}

export function checkSecret(text: string): Checked<string> {
  const secret = text.trim();
  return isValidSecret(secret)
    ? ok(secret)
    : refused("must be whsec_ followed by base64 of 16 to 64 bytes; leave it out to generate one");
}

/** A send-rate cap per second above 0 up to 10000; blank, 0 or "none": no limit (null). */
export function checkMaxPerSecond(text: string): Checked<number | null> {
  const trimmed = text.trim().toLowerCase();
  if (trimmed === "" || trimmed === "0" || trimmed === "none") return ok(null);
  const rate = Number(trimmed);
  if (!/^\d+(\.\d+)?$/.test(trimmed) || !(rate > 0) || rate > 10_000) {
    return refused("must be a number above 0 and at most 10000, or 0 for no limit");
  }
  return ok(rate);
}

/** A Jinja2 body template; blank means NetBox's default JSON body (null). */
export function checkBodyTemplate(text: string): Checked<string | null> {
  if (text.trim() === "") return ok(null);
  if (text.length > MAX_OPTION_TEXT) return refused(`longer than ${MAX_OPTION_TEXT} characters`);
  const problem = templateProblem(text);
  return problem === null ? ok(text) : refused(`template error at ${problem.message}`);
}

/** A condition set in NetBox's JSON format; blank means none (null). */
export function checkConditions(text: string): Checked<ConditionSet | null> {
  if (text.trim() === "") return ok(null);
  if (text.length > MAX_OPTION_TEXT) return refused(`longer than ${MAX_OPTION_TEXT} characters`);
  try {
    return ok(parseConditionText(text));
  } catch (error) {
    if (error instanceof ConditionError) return refused(`at ${error.message}`);
    throw error;
  }
}

/**
 * The path of a PEM file of CA certificates, by its form; blank or "none" clears it (null).
 * Whether it names a readable PEM file is checkCaFileContent's question (ca-file.ts).
 */
export function checkCaFile(text: string): Checked<string | null> {
  return checkPemPath(text, "/etc/ssl/certs/my-ca.pem");
}

/**
 * The path of the client certificate's PEM file (mutual TLS), by its form, as checkCaFile;
 * whether it holds a certificate that matches the key is checkClientCertificate's (client-cert.ts).
 */
export function checkClientCertFile(text: string): Checked<string | null> {
  return checkPemPath(text, "/etc/webhooks/client.crt");
}

/** The path of the client certificate's private key (PEM), by its form, as checkClientCertFile. */
export function checkClientKeyFile(text: string): Checked<string | null> {
  return checkPemPath(text, "/etc/webhooks/client.key");
}

function checkPemPath(text: string, example: string): Checked<string | null> {
  const path = text.trim();
  if (path === "" || path.toLowerCase() === "none") return ok(null);
  if (path.length > MAX_PATH_LENGTH)
    return refused(`must be at most ${MAX_PATH_LENGTH} characters`);
  if (invisibleCharacter(path) !== null) {
    return refused("must not contain control or invisible characters");
  }
  if (!path.startsWith("/")) {
    return refused(`must be an absolute path to a PEM file, e.g. ${example}`);
  }
  return ok(path);
}

/** A per-webhook timeout in ms; blank, 0 or "none" falls back to WEBHOOK_TIMEOUT_MS (null). */
export function checkTimeoutMs(text: string): Checked<number | null> {
  const trimmed = text.trim().toLowerCase();
  if (trimmed === "" || trimmed === "0" || trimmed === "none") return ok(null);
  const ms = Number(trimmed);
  const { min, max } = WEBHOOK_TIMEOUT_RANGE;
  if (!/^\d+$/.test(trimmed) || ms < min || ms > max) {
    return refused(
      `must be a whole number of milliseconds from ${min} to ${max}, or 0 for WEBHOOK_TIMEOUT_MS`,
    );
  }
  return ok(ms);
}

/**
 * Which failed attempt of a delivery announces webhook.failing (Webhook.failingNoticeAfter):
 * a whole number from 1, or 0 (none, never) for no notice; blank is the default, the fourth.
 */
export function checkFailingNoticeAfter(text: string): Checked<number> {
  const trimmed = text.trim().toLowerCase();
  if (trimmed === "") return ok(DEFAULT_FAILING_NOTICE_AFTER);
  if (trimmed === "none" || trimmed === "never") return ok(0);
  const n = Number(trimmed);
  if (!/^\d+$/.test(trimmed) || n > MAX_FAILING_NOTICE_AFTER) {
    return refused(
      `must be a whole number of attempts from 1 to ${MAX_FAILING_NOTICE_AFTER}, or 0 for no notice`,
    );
  }
  return ok(n);
}

/**
 * Ordered delivery per object (Webhook.ordered): a JSON boolean. The CLI's --ordered and
 * --no-ordered and the form's checkbox give one already; an API body may not.
 */
export function checkOrdered(value: unknown): Checked<boolean> {
  return typeof value === "boolean" ? ok(value) : refused("must be true or false");
}

/**
 * A retry schedule: none, short, day or a comma list of delays with units (`5s,5m,30m,2h`);
 * blank means the default (day).
 */
export function checkRetrySchedule(text: string): Checked<RetrySchedule> {
  if (text.trim() === "") return ok("day");
  const parsed = parseRetrySchedule(text);
  return parsed.ok ? ok(parsed.value) : refused(parsed.problem);
}

/** A rotation's grace period in whole seconds, 0 (no overlap) to a week. */
export function checkGraceSeconds(text: string): Checked<number> {
  const trimmed = text.trim();
  const seconds = Number(trimmed);
  if (!/^\d+$/.test(trimmed) || seconds > MAX_GRACE_SECONDS) {
    return refused(
      `must be a whole number of seconds from 0 (no overlap) to ${MAX_GRACE_SECONDS} (a week)`,
    );
  }
  return ok(seconds);
}
