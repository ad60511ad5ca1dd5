import { stripControl } from "../../text/control.ts";
import { isHttpUrl } from "../fetch/hn-client.ts";

/** Escapes text for HTML element content and double- or single-quoted attributes. */
export function escapeHtml(text: string): string {
  return stripControl(text).replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** A link when the URL is http(s); otherwise the text alone (a javascript: URL stays inert). */
export function htmlLink(url: string | null, text: string): string {
  return url && isHttpUrl(url)
    ? `<a href="${escapeHtml(url)}">${escapeHtml(text)}</a>`
    : escapeHtml(text);
}
