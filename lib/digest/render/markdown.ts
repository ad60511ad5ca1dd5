import { stripControl } from "../../text/control.ts";
import { ageText, newCountText, pointsText, typeLabel } from "./facts.ts";
import { articleLabel } from "./labels.ts";
import { modelTextToMarkdown, startsWithBlock } from "./model-markdown.ts";
import type { Renderer } from "./types.ts";

/** Backslash-escapes the characters that would turn a title into links, emphasis or HTML. */
export function escapeMarkdown(text: string): string {
  return stripControl(text)
    .replace(/\s+/g, " ")
    .replace(/[\\`*_[\]<>#|]/g, (ch) => `\\${ch}`);
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
  const body = modelTextToMarkdown(text).trim();
  return startsWithBlock(body) ? `**${label}.**\n\n${body}` : `**${label}.** ${body}`;
}

function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

/** Markdown, one story at a time, so `bun run digest | less` shows the first story early. */
export function markdownRenderer(): Renderer {
  let now = 0;
  return {
    begin(meta) {
      now = Date.parse(meta.generatedAt);
      return `# Hacker News digest\n\nGenerated ${meta.generatedAt} by ${escapeMarkdown(meta.model)} · ${plural(meta.total, "story", "stories")}${newCountText(meta.newCount)}\n`;
    },
    story(digest, index) {
      const { story } = digest;
      const title = escapeMarkdown(story.title);
      const heading = story.url ? `[${title}](${markdownUrl(story.url)})` : title;
      const facts = [
        digest.isNew ? "**New**" : undefined,
        typeLabel(story.type),
        story.site ? escapeMarkdown(story.site) : undefined,
        ageText(story.createdAt, now) ?? undefined,
        story.author ? `by ${escapeMarkdown(story.author)}` : undefined,
        pointsText(story.points, digest.pointsSinceLastRun),
        plural(story.numComments, "comment"),
        `[HN discussion](${digest.hnUrl})`,
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
        lines.push(
          "",
          "Notes:",
          "",
          ...digest.notes.map(
            (note) => `- ${stripControl(note).replace(/\s+/g, " ").replace(/</g, "&lt;")}`,
          ),
        );
      }
      return `${lines.join("\n")}\n`;
    },
    end() {
      return "";
    },
  };
}
