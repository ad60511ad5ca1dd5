import { z } from "zod";
import type { Logger } from "../../log.ts";
import { errorMessage } from "../../text/error-message.ts";
import type { ItemId } from "../types.ts";
import { type ArchivedDay, readArchivedDay, storyKeySchema } from "./archive-day.ts";
import { dayLabel, monthLabel } from "./dates.ts";
import { countText } from "./facts.ts";
import { escapeHtml } from "./html-escape.ts";
import { PAGE_STYLE } from "./html-style.ts";

/** Headlines the index shows per day: the top of the stories that day brought. */
export const HEADLINES_PER_DAY = 5;
/**
 * Headlines kept per day in index.json: enough that a day whose top stories an earlier day
 * already listed still has its own to show (the index lists each story once, on its first day).
 */
const HEADLINES_KEPT = 30;
/** The index's own record of every day (index.json): read whole, so bounded. */
const MAX_INDEX_BYTES = 64 * 1024 * 1024;

/** What the index says of one day: how many stories, and its first headlines. */
export interface IndexDay {
  stories: number;
  headlines: { id: ItemId; title: string }[];
}

const indexSchema = z.object({
  days: z.record(
    z.string(),
    z.object({
      stories: z.number().int().nonnegative(),
      headlines: z.array(
        z.object({
          id: storyKeySchema,
          title: z.string(),
        }),
      ),
    }),
  ),
});

/** A day's entry in the index, from its JSON. */
export function indexDay(day: {
  stories: readonly Pick<ArchivedDay["stories"][number], "id" | "title">[];
}): IndexDay {
  return {
    stories: day.stories.length,
    headlines: day.stories
      .slice(0, HEADLINES_KEPT)
      .map((story) => ({ id: story.id, title: story.title })),
  };
}

/**
 * Every day's entry, from index.json, so a run reads one file rather than every day's JSON;
 * a day it lacks (an archive from before it existed, or a file it could not read) is read from
 * that day's JSON once, and one that cannot be read is listed without headlines.
 */
export async function readIndexDays(
  dir: string,
  keys: readonly string[],
  logger: Logger,
): Promise<Map<string, IndexDay>> {
  const known = new Map<string, IndexDay>();
  const file = Bun.file(`${dir}/index.json`);
  if (await file.exists()) {
    try {
      if (file.size > MAX_INDEX_BYTES) throw new Error(`larger than ${MAX_INDEX_BYTES} bytes`);
      // Plain JSON.parse: index.json holds ids beyond 2^53 as strings already (indexJson).
      const parsed = indexSchema.parse(JSON.parse(await file.text()));
      for (const [key, day] of Object.entries(parsed.days)) known.set(key, day);
    } catch (error) {
      logger.warn(
        `Archive: index.json is rebuilt from the days' JSON: ${errorMessage(error).split("\n")[0]}`,
      );
    }
  }
  const days = new Map<string, IndexDay>();
  for (const key of keys) {
    let day = known.get(key);
    if (day === undefined) {
      try {
        day = indexDay(await readArchivedDay(`${dir}/${key}.json`));
      } catch {
        day = { stories: 0, headlines: [] };
      }
    }
    days.set(key, day);
  }
  return days;
}

/** index.json's text: every day's entry, to be read back by readIndexDays. */
export function indexJson(days: ReadonlyMap<string, IndexDay>): string {
  const sorted = [...days].sort(([a], [b]) => (a < b ? 1 : -1));
  return `${JSON.stringify({ days: Object.fromEntries(sorted) })}\n`;
}

/**
 * The archive's front door: every day, newest first, under month headings, each with its count
 * and first headlines linked to them on the day's page, with the feed. Self-contained like the
 * day pages: inline CSS, no scripts, nothing loaded.
 */
export function archiveIndexHtml(days: ReadonlyMap<string, IndexDay>): string {
  const shown = firstDayHeadlines(days);
  const newestFirst = [...days.keys()].sort().reverse();
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
      dayItem(key, { stories: days.get(key)?.stories ?? 0, headlines: shown.get(key) ?? [] }),
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

/**
 * Each day's headlines as the index lists them: the first HEADLINES_PER_DAY of its stories that
 * no earlier day had among its kept headlines, so a story on the front page for three days is
 * listed once, under the day it came.
 */
export function firstDayHeadlines(
  days: ReadonlyMap<string, IndexDay>,
): Map<string, IndexDay["headlines"]> {
  const seen = new Set<string>();
  const shown = new Map<string, IndexDay["headlines"]>();
  for (const key of [...days.keys()].sort()) {
    const headlines = days.get(key)?.headlines ?? [];
    const fresh = headlines.filter((story) => !seen.has(String(story.id)));
    shown.set(key, fresh.slice(0, HEADLINES_PER_DAY));
    for (const story of headlines) seen.add(String(story.id));
  }
  return shown;
}

/** One day: its name linked, its count, its JSON, then its first headlines. */
function dayItem(key: string, day: IndexDay): string {
  const facts = [
    day.stories > 0 ? countText(day.stories, "story", "stories") : undefined,
    `<a href="${key}.json">JSON</a>`,
  ].filter((fact) => fact !== undefined);
  const headlines =
    day.headlines.length === 0
      ? ""
      : `\n<ol class="headlines">\n${day.headlines
          .map(
            (story) =>
              `<li><a href="${key}.html#story-${escapeHtml(String(story.id))}">${escapeHtml(story.title)}</a></li>`,
          )
          .join("\n")}\n</ol>`;
  return `<li><a href="${key}.html">${escapeHtml(dayLabel(key))}</a> <span class="facts">· ${facts.join(" · ")}</span>${headlines}</li>`;
}
