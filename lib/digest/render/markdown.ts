import { stripControl } from "../../text/control.ts";
import { discussionLabel, discussionsOf } from "../fetch/sources.ts";
import { isHttpUrl } from "../fetch/story-links.ts";
import { citationsAsMarkdown } from "./citations.ts";
import { type DateOptions, humanDateTime } from "./dates.ts";
import {
  ageText,
  countText,
  digestTitle,
  incompleteText,
  malformedText,
  newCountText,
  pointsText,
  readingTimeText,
  typeLabel,
} from "./facts.ts";
import { articleLabel } from "./labels.ts";
import { modelTextToMarkdown, startsWithBlock } from "./model-markdown.ts";
import type { Renderer } from "./types.ts";

/**
 * Remote text (a title, a site, a note quoting a redirect target or an error) as literal inline
 * Markdown on one line: backslash-escapes what would make a link, image, autolink, emphasis,
 * strikethrough, code, raw HTML, a heading or a table cell, and an `&` that would read as an
 * entity (`&amp;` must show as written, not as `&`).
 */
export function escapeMarkdown(text: string): string {
  return (
    stripControl(text)
      .replace(/\s+/g, " ")
      .replace(/[\\`*[\]<>#|~]/g, (ch) => `\\${ch}`)
      // Between letters or digits `_` never marks emphasis, so DIGEST_ALLOWED_HOSTS stays readable.
      .replace(/(?<![\p{L}\p{N}])_|_(?![\p{L}\p{N}])/gu, "\\_")
      .replace(/&(?=[a-z][a-z0-9]*;)/gi, "\\&")
  );
}

/**
 * Remote text as a list item's literal text: escaped inline, and with a leading `-`, `+`, `=` or
 * `1.` escaped too, since there it would open a nested list or a rule inside the item.
 */
function listItemText(text: string): string {
  return escapeMarkdown(text)
    .trim()
    .replace(/^[-+=]/, "\\$&")
    .replace(/^(\d{1,9})([.)])/, "$1\\$2");
}

/** A URL safe inside `(...)` of a Markdown link: no spaces, parentheses or angle brackets. */
export function markdownUrl(url: string): string {
  return stripControl(url).replace(/[\s()<>]/g, (ch) =>
    encodeURIComponent(ch).replace("(", "%28").replace(")", "%29"),
  );
}

/** `**Label.** text`, or the label on its own line when the text opens with a list or heading. */
function labelled(label: string, text: string | null): string {
  if (text === null) return `**${label}.** _No summary._`;
  const body = citationsAsMarkdown(modelTextToMarkdown(text)).trim();
  return startsWithBlock(body) ? `**${label}.**\n\n${body}` : `**${label}.** ${body}`;
}

/** Markdown, one story at a time, so `bun run digest | less` shows the first story early. */
export function markdownRenderer(options: DateOptions = {}): Renderer {
  let now = 0;
  return {
    begin(meta) {
      now = Date.parse(meta.generatedAt);
      return `# ${escapeMarkdown(digestTitle(meta))}\n\n${humanDateTime(now, options)} · ${escapeMarkdown(meta.model)} · ${countText(meta.total, "story", "stories")}${newCountText(meta.newCount)}${malformedText(meta.malformedHits)}\n`;
    },
    story(digest, index) {
      const { story } = digest;
      const title = escapeMarkdown(story.title);
      // Stories are parsed with http(s) links only; checked again here, as the HTML page does.
      const heading =
        story.url && isHttpUrl(story.url) ? `[${title}](${markdownUrl(story.url)})` : title;
      const facts = [
        digest.isNew ? "**New**" : undefined,
        typeLabel(story.type),
        story.site ? escapeMarkdown(story.site) : undefined,
        readingTimeText(digest.articleWords) ?? undefined,
        ageText(story.createdAt, now) ?? undefined,
        story.author ? `by ${escapeMarkdown(story.author)}` : undefined,
        pointsText(story.points, digest.pointsSinceLastRun),
        countText(story.numComments, "comment"),
        story.tags && story.tags.length > 0 ? escapeMarkdown(story.tags.join(", ")) : undefined,
        ...discussionsOf(story).map(
          (discussion) => `[${discussionLabel(discussion.source)}](${markdownUrl(discussion.url)})`,
        ),
      ].filter((fact) => fact !== undefined);
      const lines = [
        "",
        `## ${index + 1}. ${heading}`,
        "",
        facts.join(" · "),
        "",
        labelled(articleLabel(digest.articleSource), digest.articleSummary),
        "",
        labelled("Discussion", digest.discussionSummary),
      ];
      if (digest.notes.length > 0) {
        lines.push("", "Notes:", "", ...digest.notes.map((note) => `- ${listItemText(note)}`));
      }
      return `${lines.join("\n")}\n`;
    },
    end(incomplete) {
      return incomplete ? `\n---\n\n_${incompleteText(incomplete)}_\n` : "";
    },
  };
}
