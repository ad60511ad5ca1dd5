import { dayLabel, monthLabel } from "./dates.ts";
import { countText } from "./facts.ts";
import { escapeHtml } from "./html-escape.ts";
import { PAGE_STYLE } from "./html-style.ts";

/**
 * The archive's front door: every day's page, newest first, under month headings, with the
 * feed. Self-contained like the day pages: inline CSS, no scripts, nothing loaded.
 */
export function archiveIndexHtml(days: readonly string[]): string {
  const newestFirst = [...days].sort().reverse();
  const months: string[] = [];
  let month = "";
  for (const key of newestFirst) {
    const label = monthLabel(key);
    if (label !== month) {
      if (month !== "") months.push("</ul>");
      months.push(`<h2>${escapeHtml(label)}</h2>`, '<ul class="days">');
      month = label;
    }
    months.push(
      `<li><a href="${key}.html">${escapeHtml(dayLabel(key))}</a> <span class="facts">· <a href="${key}.json">JSON</a></span></li>`,
    );
  }
  if (month !== "") months.push("</ul>");
  return [
    "<!doctype html>",
    '<html lang="en">',
    "<head>",
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    "<title>Hacker News digest · every day</title>",
    '<link rel="alternate" type="application/atom+xml" title="Hacker News digest" href="feed.xml">',
    `<style>${PAGE_STYLE}\n</style>`,
    "</head>",
    "<body>",
    "<header>",
    "<h1>Hacker News digest</h1>",
    `<p>${countText(newestFirst.length, "day")} · <a href="feed.xml">Atom feed</a> of the last 7 days</p>`,
    "</header>",
    "<main>",
    ...months,
    "</main>",
    "</body>",
    "</html>",
    "",
  ].join("\n");
}
