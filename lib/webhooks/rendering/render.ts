import { errorMessage } from "../../text/error-message.ts";
import {
  headerBytes,
  isWebhookUrl,
  MAX_HEADER_BYTES,
  sendableHeaderProblem,
} from "../definition/validate.ts";
import type { RenderedDelivery, Webhook } from "../model.ts";
import { isTemplated, renderTemplate, TemplateError } from "./template.ts";

// RenderedDelivery lives in model.ts (the store ports name it); rendering it is this file's.
export type { RenderedDelivery };

export type Templates = Pick<Webhook, "bodyTemplate" | "url" | "headers">;

/** Whether any of the webhook's body, URL or header values is a template. */
export function usesTemplates(webhook: Templates): boolean {
  return (
    webhook.bodyTemplate !== null ||
    isTemplated(webhook.url) ||
    webhook.headers.some(([, value]) => isTemplated(value))
  );
}

/**
 * Renders `webhook`'s templates for a change. `defaultBody` is NetBox's default JSON body of the
 * change (buildPayload): sent as it is when there is no body template, and, parsed, the context
 * every template is given (`event`, `timestamp`, `model`, `username`, `request_id`, `data`,
 * `snapshots`), as NetBox does; `parsed` gives that context already parsed, the same object for
 * every webhook of a change (the engine then converts it once). Never throws: a failing template
 * is reported in templateError.
 */
export function renderDelivery(
  webhook: Templates,
  defaultBody: string,
  parsed?: () => Record<string, unknown>,
): RenderedDelivery {
  if (!usesTemplates(webhook)) {
    return { payload: defaultBody, url: null, headers: null, context: null, templateError: null };
  }
  const context = parsed?.() ?? (JSON.parse(defaultBody) as Record<string, unknown>);
  try {
    const url = isTemplated(webhook.url) ? renderUrl(webhook.url, context) : null;
    const headers = webhook.headers.some(([, value]) => isTemplated(value))
      ? renderHeaders(webhook.headers, context)
      : null;
    const templated = webhook.bodyTemplate !== null;
    const payload = templated
      ? inPart("body", () => renderTemplate(webhook.bodyTemplate ?? "", context))
      : defaultBody;
    return { payload, url, headers, context: templated ? defaultBody : null, templateError: null };
  } catch (error) {
    const message = errorMessage(error);
    return { payload: "", url: null, headers: null, context: defaultBody, templateError: message };
  }
}

function renderUrl(template: string, context: Record<string, unknown>): string {
  const url = inPart("URL", () => renderTemplate(template, context)).trim();
  if (!isWebhookUrl(url)) {
    throw new Error(
      `Template error in the URL: it rendered to ${JSON.stringify(url.slice(0, 200))}, not an http:// or https:// URL`,
    );
  }
  return url;
}

/**
 * Each header value rendered in turn, stopped as soon as all of them together pass
 * MAX_HEADER_BYTES: each may render up to MAX_RENDERED_BYTES, and five such are more than any
 * server takes.
 */
function renderHeaders(
  headers: ReadonlyArray<[string, string]>,
  context: Record<string, unknown>,
): Array<[string, string]> {
  const rendered: Array<[string, string]> = [];
  for (const [name, value] of headers) {
    rendered.push([name, isTemplated(value) ? renderHeaderValue(name, value, context) : value]);
    const bytes = headerBytes(rendered);
    if (bytes > MAX_HEADER_BYTES) {
      throw new Error(
        `Template error in the headers: they rendered to over ${MAX_HEADER_BYTES} bytes in all (${bytes} by header ${name})`,
      );
    }
  }
  return rendered;
}

function renderHeaderValue(name: string, template: string, context: Record<string, unknown>) {
  const value = inPart(`header ${name}`, () => renderTemplate(template, context)).trim();
  // A newline from the data would otherwise start a header of its own.
  const problem = sendableHeaderProblem(value);
  if (problem !== null) throw new Error(`Template error in header ${name}: ${problem}`);
  return value;
}

function inPart<T>(part: string, fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    if (error instanceof TemplateError)
      throw new Error(`Template error in the ${part}: ${error.message}`);
    throw error;
  }
}
