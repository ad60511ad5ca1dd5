import { stripControl } from "../../text/control.ts";
import { isHttpUrl } from "../fetch/hn-client.ts";
import type { StoryDigest } from "../types.ts";
import { ageText, malformedText, newCountText, pointsText, typeLabel } from "./facts.ts";
import { articleLabel } from "./labels.ts";
import { modelTextToHtml } from "./model-markdown.ts";
import type { Renderer } from "./types.ts";

/** Escapes text for HTML element content and double- or single-quoted attributes. */
export function escapeHtml(text: string): string {
  return stripControl(text).replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** A summary as HTML: the model's Markdown rendered with only a safe subset, raw HTML escaped. */
function paragraphs(text: string | null): string {
  if (text === null) return `<p class="missing">No summary.</p>`;
  return modelTextToHtml(text);
}

function link(url: string | null, text: string): string {
  // Only http(s) links become hrefs: a javascript: URL from the feed must stay inert text.
  return url && isHttpUrl(url)
    ? `<a href="${escapeHtml(url)}">${escapeHtml(text)}</a>`
    : escapeHtml(text);
}

const STYLE = `
  :root { color-scheme: light dark; --muted: #6b7280; --accent: #ff6600; }
  body { font: 16px/1.55 system-ui, -apple-system, "Segoe UI", sans-serif; max-width: 46rem;
         margin: 2rem auto; padding: 0 1rem; }
  header h1 { margin-bottom: .25rem; }
  header p, .facts { color: var(--muted); font-size: .9rem; }
  article { border-top: 1px solid #8884; padding: 1rem 0; }
  article h2 { font-size: 1.2rem; margin: 0 0 .25rem; }
  article h3 { font-size: .95rem; margin: 1rem 0 .25rem; color: var(--accent); }
  article h4 { font-size: .9rem; margin: .75rem 0 .25rem; }
  pre { overflow-x: auto; } code { font-size: .9em; }
  a { color: inherit; }
  .missing { color: var(--muted); font-style: italic; }
  .notes { font-size: .9rem; color: var(--muted); }
  .new { color: var(--accent); }`;

/** A self-contained page (inline CSS, no scripts, no external resources); everything escaped. */
export function htmlRenderer(): Renderer {
  let now = 0;
  return {
    begin(meta) {
      now = Date.parse(meta.generatedAt);
      return [
        "<!doctype html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        `<title>Hacker News digest ${escapeHtml(meta.generatedAt)}</title>`,
        `<style>${STYLE}\n</style>`,
        "</head>",
        "<body>",
        "<header>",
        "<h1>Hacker News digest</h1>",
        `<p>Generated ${escapeHtml(meta.generatedAt)} by ${escapeHtml(meta.model)} · ${meta.total} ${meta.total === 1 ? "story" : "stories"}${escapeHtml(newCountText(meta.newCount) + malformedText(meta.malformedHits))}</p>`,
        "</header>",
        "<main>",
        "",
      ].join("\n");
    },
    story(digest: StoryDigest, index: number) {
      const { story } = digest;
      const facts = [
        digest.isNew ? '<strong class="new">New</strong>' : undefined,
        typeLabel(story.type),
        story.site ? escapeHtml(story.site) : undefined,
        ageText(story.createdAt, now) ?? undefined,
        story.author ? `by ${escapeHtml(story.author)}` : undefined,
        escapeHtml(pointsText(story.points, digest.pointsSinceLastRun)),
        `${story.numComments} ${story.numComments === 1 ? "comment" : "comments"}`,
        link(digest.hnUrl, "HN discussion"),
      ].filter((fact) => fact !== undefined);
      const notes =
        digest.notes.length > 0
          ? `<ul class="notes">\n${digest.notes.map((note) => `<li>${escapeHtml(note)}</li>`).join("\n")}\n</ul>\n`
          : "";
      return [
        `<article id="story-${story.id}">`,
        `<h2>${index + 1}. ${link(story.url, story.title)}</h2>`,
        `<p class="facts">${facts.join(" · ")}</p>`,
        `<h3>${articleLabel(digest.articleSource)}</h3>`,
        paragraphs(digest.articleSummary),
        "<h3>Discussion</h3>",
        paragraphs(digest.discussionSummary),
        `${notes}</article>`,
        "",
      ].join("\n");
    },
    end() {
      return "</main>\n</body>\n</html>\n";
    },
  };
}
