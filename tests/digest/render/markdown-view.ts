import MarkdownIt from "markdown-it";

/**
 * A permissive Markdown viewer: CommonMark with GFM tables and strikethrough, raw HTML passed
 * through, and links kept whatever their scheme, so a test sees what the digest's Markdown
 * means rather than what markdown-it's own javascript: filter hides.
 */
const viewer = new MarkdownIt({ html: true, linkify: false });
viewer.validateLink = () => true;

/** The digest's Markdown as this viewer turns it into HTML. */
export function viewMarkdown(markdown: string): string {
  return viewer.render(markdown);
}

/** How text shows as plain HTML text: what literal text must turn into. */
export function htmlText(text: string): string {
  return viewer.utils.escapeHtml(text);
}

/** The HTML a viewer makes of the "Notes:" list at the end of a story, up to the end. */
export function viewNotes(markdown: string): string {
  const html = viewMarkdown(markdown);
  const at = html.indexOf("<p>Notes:</p>\n");
  if (at === -1) throw new Error(`no notes in:\n${html}`);
  return html.slice(at + "<p>Notes:</p>\n".length);
}
