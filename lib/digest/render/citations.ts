/**
 * A summary's citations (markers holding a comment's page, made by summarise/citations.ts) as
 * each output shows them: numbered in the order first cited, the same page the same number, a
 * link to the comment on HN or Lobsters.
 */
import { isHttpUrl } from "../fetch/story-links.ts";
import { CITATION, citeMarker } from "../summarise/citations.ts";
import { escapeHtml } from "./html-escape.ts";

/** Each cited page and its number, in the order first cited. */
export function citedPages(text: string): string[] {
  const pages: string[] = [];
  for (const match of text.matchAll(CITATION)) {
    const url = match[1] ?? "";
    if (!pages.includes(url)) pages.push(url);
  }
  return pages;
}

/** `[[1]](url)`: a Markdown link to the comment, after the summary was made safe for Markdown. */
export function citationsAsMarkdown(markdown: string): string {
  const pages = citedPages(markdown);
  return markdown.replace(CITATION, (_whole, url: string) => {
    const safe = url.replace(/[\s()<>]/g, encodeURIComponent);
    return `[[${pages.indexOf(url) + 1}]](${safe})`;
  });
}

/**
 * `<sup class="cite"><a href="…">[1]</a></sup>` in markdown-it's HTML of the summary, which has
 * the marker's page escaped as text (`&amp;`): read back, checked to be http(s), escaped again.
 */
export function citationsAsHtml(html: string): string {
  const decoded = (url: string) =>
    url.replace(/&(amp|quot|lt|gt|#39);/g, (_entity, name: string) => ENTITIES[name] ?? "");
  const pages = citedPages(html);
  return html.replace(CITATION, (_whole, url: string) => {
    const page = decoded(url);
    if (!isHttpUrl(page)) return "";
    return `<sup class="cite"><a href="${escapeHtml(page)}">[${pages.indexOf(url) + 1}]</a></sup>`;
  });
}

const ENTITIES: Record<string, string> = { amp: "&", quot: '"', lt: "<", gt: ">", "#39": "'" };

/** For JSON: the summary with `[1]`, `[2]` in place of its markers, and the pages they number. */
export function citationsAsNumbers(text: string | null): { text: string | null; pages: string[] } {
  if (text === null) return { text, pages: [] };
  const pages = citedPages(text);
  return {
    text: text.replace(CITATION, (_whole, url: string) => `[${pages.indexOf(url) + 1}]`),
    pages,
  };
}

/** An archived summary's `[1]`, `[2]` made markers again from the pages its JSON lists. */
export function citationsFromNumbers(text: string | null, pages: readonly string[]): string | null {
  if (text === null || pages.length === 0) return text;
  return text.replace(/\[(\d{1,3})\]/g, (whole, n: string) => {
    const page = pages[Number(n) - 1];
    return page && isHttpUrl(page) && !/[\s⟦⟧]/.test(page) ? citeMarker(page) : whole;
  });
}
