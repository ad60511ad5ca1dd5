import { stripControl } from "../../text/control.ts";
import { isHttpUrl } from "../fetch/story-links.ts";

/**
 * Escapes text for HTML element content and double- or single-quoted attributes. U+2028 and
 * U+2029 (line and paragraph separators, which end a line in a script that reads the page) and
 * U+FEFF (an invisible byte-order mark) are written as character references too.
 */
export function escapeHtml(text: string): string {
  return stripControl(text).replace(/[&<>"'\u2028\u2029\uFEFF]/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** HTML made elsewhere (markdown-it's) with U+2028, U+2029 and U+FEFF as character references. */
export function escapeSeparators(html: string): string {
  return html.replace(/[\u2028\u2029\uFEFF]/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** A link when the URL is http(s); otherwise the text alone (a javascript: URL stays inert). */
export function htmlLink(url: string | null, text: string): string {
  return url && isHttpUrl(url)
    ? `<a href="${escapeHtml(url)}">${escapeHtml(text)}</a>`
    : escapeHtml(text);
}
