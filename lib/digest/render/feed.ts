import { stripControl } from "../../text/control.ts";
import { VERSION } from "../../version.ts";
import { discussionLabel, discussionsOf } from "../fetch/sources.ts";
import { isHttpUrl } from "../fetch/story-links.ts";
import type { ArticleSource, Discussion, ItemId } from "../types.ts";
import { citationsAsHtml } from "./citations.ts";
import { dayLabel } from "./dates.ts";
import { countText, pointsText, readingTimeText, sitesLabel } from "./facts.ts";
import { escapeHtml, htmlLink } from "./html-escape.ts";
import { articleLabel } from "./labels.ts";
import { modelTextToHtml } from "./model-markdown.ts";

/** What the feed needs of one story of an archived day (a day's JSON, read back). */
export interface FeedStory {
  id: ItemId;
  /** Absent (days from before sources): the HN item page of `id`. */
  discussions?: Discussion[];
  title: string;
  url: string | null;
  site: string | null;
  points: number;
  numComments: number;
  articleWords?: number | null;
  articleSummary: string | null;
  articleSource: ArticleSource | null;
  discussionSummary: string | null;
}

/** One archived day: its name ("2026-11-25"), when its run was, its stories in front-page order. */
export interface FeedDay {
  key: string;
  generatedAt: string;
  model: string;
  stories: readonly FeedStory[];
}

/** A catch-up edition of the archive: one entry linking its page. */
export interface FeedEdition {
  /** Its page's name: `catch-up-2026-11-29`. */
  name: string;
  generatedAt: string;
  hours: number;
  stories: readonly FeedStory[];
}

interface Entry {
  story: FeedStory;
  rank: number;
  published: string;
  updated: string;
  days: string[];
}

/**
 * The Atom 1.0 feed (RFC 4287) of the days given: one entry per story, whose id is its HN
 * discussion URL, so a story on the front page two days running is one entry, updated with the
 * newer day's summaries and time, never a duplicate. Newest first. Links are relative to the
 * feed (`index.html`, the day pages), so they work wherever the folder is served from.
 */
export function atomFeed(
  days: readonly FeedDay[],
  options: { id: string; editions?: readonly FeedEdition[] },
): string {
  const entries = new Map<ItemId, Entry>();
  const byDay = [...days].sort((a, b) => a.generatedAt.localeCompare(b.generatedAt));
  for (const day of byDay) {
    day.stories.forEach((story, index) => {
      const before = entries.get(story.id);
      entries.set(story.id, {
        story,
        rank: index + 1,
        published: before?.published ?? day.generatedAt,
        updated: day.generatedAt,
        days: [...(before?.days ?? []), day.key],
      });
    });
  }
  const sorted = [...entries.values()].sort(
    (a, b) => b.updated.localeCompare(a.updated) || a.rank - b.rank,
  );
  const editions = [...(options.editions ?? [])].sort((a, b) =>
    b.generatedAt.localeCompare(a.generatedAt),
  );
  const updated = byDay.at(-1)?.generatedAt ?? new Date(0).toISOString();
  const model = byDay.at(-1)?.model;
  // The sites its stories were read on, as the pages' headings name them.
  const sites = sitesLabel(
    [...byDay, ...editions].flatMap((day) =>
      day.stories.flatMap((story) => discussionsOf(story).map((d) => d.source)),
    ),
  );
  const pages = sites.includes(" and ") ? "front pages" : "front page";
  return [
    '<?xml version="1.0" encoding="utf-8"?>',
    '<feed xmlns="http://www.w3.org/2005/Atom">',
    `  <id>${xml(options.id)}</id>`,
    `  <title>${xml(sites)} digest</title>`,
    model
      ? `  <subtitle>The ${xml(sites)} ${pages}, each story's article and discussion summarised by ${xml(model)}</subtitle>`
      : undefined,
    '  <link rel="self" type="application/atom+xml" href="feed.xml"/>',
    '  <link rel="alternate" type="text/html" href="index.html"/>',
    `  <updated>${xml(updated)}</updated>`,
    "  <author><name>hn-digest</name></author>",
    `  <generator version="${xml(VERSION)}">hn-digest</generator>`,
    ...editions.map((edition) => editionXml(edition, options.id)),
    ...sorted.map(entryXml),
    "</feed>",
    "",
  ]
    .filter((line) => line !== undefined)
    .join("\n");
}

/**
 * A catch-up edition's entry: its page, and its stories' headlines, each linked to its place on
 * the page. Its id is the feed's with the page's name, the same however often it is written.
 */
function editionXml(edition: FeedEdition, feedId: string): string {
  const span =
    edition.hours % 24 === 0
      ? countText(edition.hours / 24, "day")
      : countText(edition.hours, "hour");
  const page = `${edition.name}.html`;
  const items = edition.stories.map(
    (story) =>
      `<li>${htmlLink(`${page}#story-${story.id}`, story.title)}${story.site ? ` (${escapeHtml(story.site)})` : ""}</li>`,
  );
  return [
    "  <entry>",
    `    <id>${xml(`${feedId}/${edition.name}`)}</id>`,
    `    <title>${xml(`Catch-up: the best of ${span}, ${countText(edition.stories.length, "story", "stories")}`)}</title>`,
    `    <link rel="alternate" type="text/html" href="${xml(page)}"/>`,
    `    <published>${xml(edition.generatedAt)}</published>`,
    `    <updated>${xml(edition.generatedAt)}</updated>`,
    `    <content type="html">${xml(`<ol>\n${items.join("\n")}\n</ol>`)}</content>`,
    "  </entry>",
  ].join("\n");
}

function entryXml(entry: Entry): string {
  const { story } = entry;
  const discussions = discussionsOf(story);
  const discussion = discussions[0]?.url ?? "";
  const article = story.url && isHttpUrl(story.url) ? story.url : null;
  return [
    "  <entry>",
    `    <id>${xml(discussion)}</id>`,
    `    <title>${xml(oneLine(story.title))}</title>`,
    `    <link rel="alternate" type="text/html" href="${xml(article ?? discussion)}"/>`,
    article
      ? `    <link rel="related" type="text/html" title="HN discussion" href="${xml(discussion)}"/>`
      : undefined,
    `    <link rel="via" type="text/html" title="This day's digest" href="${xml(`${entry.days.at(-1)}.html#story-${story.id}`)}"/>`,
    `    <published>${xml(entry.published)}</published>`,
    `    <updated>${xml(entry.updated)}</updated>`,
    `    <content type="html">${xml(contentHtml(entry, article, discussions))}</content>`,
    "  </entry>",
  ]
    .filter((line) => line !== undefined)
    .join("\n");
}

/** The entry's body: what the story is, both summaries, and the two links. */
function contentHtml(
  entry: Entry,
  article: string | null,
  discussions: readonly Discussion[],
): string {
  const { story } = entry;
  const first = entry.days[0];
  const facts = [
    story.site ? escapeHtml(story.site) : undefined,
    readingTimeText(story.articleWords) ?? undefined,
    pointsText(story.points, null),
    `#${entry.rank} on the front page${
      entry.days.length > 1 && first ? ` (there since ${escapeHtml(dayLabel(first))})` : ""
    }`,
  ].filter((fact) => fact !== undefined);
  const links = discussions.map((discussion) =>
    htmlLink(
      discussion.url,
      `${discussionLabel(discussion.source)} (${countText(discussions.length > 1 ? discussion.comments : story.numComments, "comment")})`,
    ),
  );
  return [
    `<p>${facts.join(" · ")}</p>`,
    `<h3>${articleLabel(story.articleSource)}</h3>`,
    summaryHtml(story.articleSummary),
    "<h3>Discussion</h3>",
    summaryHtml(story.discussionSummary),
    `<p>${[article ? htmlLink(article, "Read the article") : undefined, ...links].filter((link) => link !== undefined).join(" · ")}</p>`,
  ].join("\n");
}

function summaryHtml(text: string | null): string {
  return text === null ? "<p><em>No summary.</em></p>" : citationsAsHtml(modelTextToHtml(text));
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/**
 * Text for XML content or a double-quoted attribute: escaped, and without what XML 1.0 cannot
 * carry at all (control characters, lone surrogates, U+FFFE/U+FFFF), which a parser would reject;
 * U+2028, U+2029 and U+FEFF as character references, as in the page.
 */
export function xml(text: string): string {
  return stripControl(text)
    .toWellFormed()
    .replace(/[\uFFFE\uFFFF]/g, "")
    .replace(/[&<>"\u2028\u2029\uFEFF]/g, (ch) => `&#${ch.charCodeAt(0)};`);
}
