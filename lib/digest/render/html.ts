import { discussionLabel, discussionsOf } from "../fetch/sources.ts";
import type { DigestMeta, StoryDigest } from "../types.ts";
import { citationsAsHtml } from "./citations.ts";
import { type DateOptions, dayLabel, humanDateTime, localDateKey } from "./dates.ts";
import {
  ageText,
  countText,
  digestTitle,
  incompleteText,
  malformedText,
  pointsText,
  readingTimeText,
  typeLabel,
} from "./facts.ts";
import { escapeHtml, htmlLink } from "./html-escape.ts";
import { PAGE_STYLE } from "./html-style.ts";
import { articleLabel } from "./labels.ts";
import { modelTextToHtml } from "./model-markdown.ts";
import { langAttribute, type PageWords, pageWords } from "./page-words.ts";
import type { Incomplete, Renderer } from "./types.ts";

export { escapeHtml } from "./html-escape.ts";

export interface HtmlOptions extends DateOptions {
  /** A day's page in the archive: its header links to the archive's index and feed. */
  archive?: boolean;
  /** In the archive, the day before this one that has a page ("2026-11-24"), linked. */
  previousDay?: string;
  /** In the archive, the day after this one that has a page, linked. */
  nextDay?: string;
}

/** A story and its place on the front page (1-based). */
interface Ranked {
  digest: StoryDigest;
  rank: number;
}

/**
 * A self-contained page (inline CSS, no scripts, no external resources); everything escaped.
 * The page opens with its contents, so it is written whole at the end: stories new since the
 * last run first, then the rest, each group in front-page order.
 */
export function htmlRenderer(options: HtmlOptions = {}): Renderer {
  let meta: DigestMeta | undefined;
  const stories: Ranked[] = [];
  return {
    begin(value) {
      meta = value;
      return "";
    },
    story(digest, index) {
      stories.push({ digest, rank: index + 1 });
      return "";
    },
    end(incomplete) {
      return meta === undefined ? "" : htmlPage(meta, stories, { ...options, incomplete });
    },
  };
}

interface Group {
  id: string;
  heading: string;
  stories: readonly Ranked[];
}

/** What a page writes in which language: its own words, and the summaries' language. */
interface Languages {
  words: PageWords;
  /** The summaries' language (--language); undefined: English. */
  summaries: string | undefined;
}

/**
 * New stories first; without a previous run to compare with, one group. In the archive, the
 * stories an earlier run that day showed and the last one did not come last, on their own.
 */
function groups(all: readonly Ranked[], meta: DigestMeta, words: PageWords): Group[] {
  const stories = all.filter((s) => !s.digest.earlierToday);
  const earlier = {
    id: "earlier",
    heading: words.earlierToday,
    stories: all.filter((s) => s.digest.earlierToday),
  };
  const current =
    meta.newCount === null
      ? [{ id: "front-page", heading: words.frontPage, stories }]
      : [
          {
            id: "new",
            heading: words.newSinceLastRun,
            stories: stories.filter((s) => s.digest.isNew === true),
          },
          {
            id: "seen",
            heading: words.stillOnFrontPage,
            stories: stories.filter((s) => s.digest.isNew !== true),
          },
        ];
  return [...current, earlier].filter((group) => group.stories.length > 0);
}

function htmlPage(
  meta: DigestMeta,
  stories: readonly Ranked[],
  options: HtmlOptions & { incomplete?: Incomplete },
): string {
  const now = Date.parse(meta.generatedAt);
  const when = humanDateTime(now, options);
  const languages = { words: pageWords(options.locale), summaries: options.locale };
  const { words } = languages;
  const parts = groups(stories, meta, words);
  // The page's facts and notes are English; its summaries, its date and its translated
  // headings are marked with their own language where they carry one.
  const dateLang = langAttribute(options.locale);
  const whenHtml =
    dateLang === "" ? escapeHtml(when) : `<span${dateLang}>${escapeHtml(when)}</span>`;
  return [
    "<!doctype html>",
    '<html lang="en">',
    "<head>",
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(digestTitle(meta))} · ${escapeHtml(when)}</title>`,
    options.archive
      ? '<link rel="alternate" type="application/atom+xml" title="Hacker News digest" href="feed.xml">'
      : undefined,
    `<style>${PAGE_STYLE}\n</style>`,
    "</head>",
    "<body>",
    "<header>",
    `<h1>${escapeHtml(digestTitle(meta))}</h1>`,
    `<p>${whenHtml} · ${escapeHtml(meta.model)} · ${countText(meta.total, "story", "stories")}${newSince(meta, options)}${escapeHtml(malformedText(meta.malformedHits))}</p>`,
    options.archive ? archiveNav(options.previousDay, options.nextDay) : undefined,
    "</header>",
    contents(parts, words),
    "<main>",
    ...parts.map(
      (group) =>
        `<section aria-labelledby="${group.id}">\n<h2 id="${group.id}"${langAttribute(words.lang)}>${group.heading}</h2>\n${group.stories
          .map((s) => storyHtml(s, { now, ...languages }))
          .join("\n")}\n</section>`,
    ),
    options.incomplete
      ? `<p class="incomplete"><strong>${incompleteText(options.incomplete)}</strong></p>`
      : undefined,
    "</main>",
    "</body>",
    "</html>",
    "",
  ]
    .filter((line) => line !== undefined)
    .join("\n");
}

/** The archive page's links: the day before, all days, the feed, the day after. */
function archiveNav(previousDay: string | undefined, nextDay: string | undefined): string {
  const previous = previousDay
    ? `<a href="${previousDay}.html" rel="prev">← ${escapeHtml(dayLabel(previousDay))}</a> · `
    : "";
  const next = nextDay
    ? ` · <a href="${nextDay}.html" rel="next">${escapeHtml(dayLabel(nextDay))} →</a>`
    : "";
  return `<nav>${previous}<a href="index.html">All days</a> · <a href="feed.xml">Atom feed</a>${next}</nav>`;
}

/** "· 3 new since the last run (Tuesday 24 November 2026, 07:00 UTC)"; its time alone that day. */
function newSince(meta: DigestMeta, options: DateOptions): string {
  if (meta.newCount === null) return "";
  const count = meta.newCount === 0 ? "nothing" : String(meta.newCount);
  if (meta.lastRunAt === null) return ` · ${count} new since the last run`;
  const last = Date.parse(meta.lastRunAt);
  const sameDay =
    localDateKey(last, options) === localDateKey(Date.parse(meta.generatedAt), options);
  const when = humanDateTime(last, options);
  const said = sameDay ? `at ${when.slice(when.lastIndexOf(", ") + 2)}` : `(${when})`;
  return ` · ${count} new since the last run ${escapeHtml(said)}`;
}

/** The table of contents: every story's title, linked to it, with what helps pick one. */
function contents(parts: readonly Group[], words: PageWords): string {
  if (parts.length === 0) return "";
  const lists = parts.map((group) => {
    const items = group.stories.map(({ digest, rank }) => {
      const { story } = digest;
      const facts = [
        story.site ? escapeHtml(story.site) : typeLabel(story.type),
        readingTimeText(digest.articleWords),
        countText(story.numComments, "comment"),
      ].filter((fact) => fact !== null);
      return `<li value="${rank}"><a href="#story-${story.id}">${escapeHtml(story.title)}</a> <span class="facts">${facts.join(" · ")}</span></li>`;
    });
    return `<h2${langAttribute(words.lang)}>${group.heading}</h2>\n<ol>\n${items.join("\n")}\n</ol>`;
  });
  return `<nav class="toc" id="contents" aria-label="${escapeHtml(words.contents)}">\n${lists.join("\n")}\n</nav>`;
}

function storyHtml({ digest, rank }: Ranked, page: Languages & { now: number }): string {
  const { now, words } = page;
  const { story } = digest;
  const facts = [
    digest.isNew ? '<strong class="new">New</strong>' : undefined,
    typeLabel(story.type),
    story.site ? escapeHtml(story.site) : undefined,
    readingTimeText(digest.articleWords) ?? undefined,
    ageText(story.createdAt, now) ?? undefined,
    story.author ? `by ${escapeHtml(story.author)}` : undefined,
    escapeHtml(pointsText(story.points, digest.pointsSinceLastRun)),
    countText(story.numComments, "comment"),
    ...tagsHtml(story.tags),
    ...discussionsOf(story).map((discussion) =>
      htmlLink(discussion.url, discussionLabel(discussion.source)),
    ),
  ].filter((fact) => fact !== undefined);
  const notes =
    digest.notes.length > 0
      ? `<ul class="notes">\n${digest.notes.map((note) => `<li>${escapeHtml(note)}</li>`).join("\n")}\n</ul>\n`
      : "";
  return [
    `<article id="story-${story.id}">`,
    `<h3><span class="rank">${rank}.</span> ${htmlLink(story.url, story.title)}</h3>`,
    `<p class="facts">${facts.join(" · ")}</p>`,
    headingHtml(articleHeading(digest.articleSource, words)),
    summaryHtml(digest.articleSummary, page),
    headingHtml({ text: words.discussion, lang: words.lang }),
    summaryHtml(digest.discussionSummary, page),
    `${notes}<p class="top"><a href="#contents"${langAttribute(words.lang)}>↑ ${escapeHtml(words.contents)}</a></p>`,
    "</article>",
  ].join("\n");
}

/** A Lobsters story's tags, one fact. */
function tagsHtml(tags: readonly string[] | undefined): string[] {
  return tags && tags.length > 0
    ? [`<span class="tags">${tags.map(escapeHtml).join(", ")}</span>`]
    : [];
}

/** The article half's heading: translated when it is plainly "Article", else as labels.ts has it. */
function articleHeading(
  source: StoryDigest["articleSource"],
  words: PageWords,
): { text: string; lang: string | undefined } {
  if (source === null || source === "article") return { text: words.article, lang: words.lang };
  return { text: articleLabel(source), lang: undefined };
}

function headingHtml(heading: { text: string; lang: string | undefined }): string {
  return `<h4${langAttribute(heading.lang)}>${escapeHtml(heading.text)}</h4>`;
}

/**
 * A summary as HTML: the model's Markdown rendered with only a safe subset, raw HTML escaped;
 * in an element marked with the summaries' language when it is not English.
 */
function summaryHtml(text: string | null, page: Languages): string {
  const { words } = page;
  if (text === null) {
    return `<p class="missing"${langAttribute(words.lang)}>${escapeHtml(words.noSummary)}</p>`;
  }
  const html = citationsAsHtml(modelTextToHtml(text, "h5"));
  const lang = langAttribute(page.summaries);
  return lang === "" ? html : `<div class="summary"${lang}>\n${html}\n</div>`;
}
