import MarkdownIt from "markdown-it";
import { stripControl } from "../../text/control.ts";
import { escapeSeparators } from "./html-escape.ts";

/**
 * markdown-it with only the safe subset models use turned on: paragraphs, line breaks, bold,
 * italics, inline code, lists, quotes, code blocks and headings. Raw HTML is escaped (html:
 * false), and links, images and autolinks are off, so a model cannot put a script, an image
 * that loads from elsewhere or a javascript: link on the page.
 */
const markdown = new MarkdownIt("zero", {
  html: false,
  linkify: false,
  typographer: false,
  breaks: true,
}).enable([
  "paragraph",
  "newline",
  "escape",
  "entity",
  "emphasis",
  "backticks",
  "list",
  "blockquote",
  "fence",
  "heading",
  "lheading",
]);

/**
 * The model's Markdown as HTML, its headings demoted to `headingTag` (below the story and its
 * sections: <h5> on a page whose stories are <h3>).
 */
export function modelTextToHtml(text: string, headingTag = "h4"): string {
  const tokens = markdown.parse(stripControl(text), {});
  for (const token of tokens) {
    if (token.type === "heading_open" || token.type === "heading_close") token.tag = headingTag;
  }
  return escapeSeparators(markdown.renderer.render(tokens, markdown.options, {}).trim());
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const ATX_HEADING = /^( {0,3})(#{1,6})(?=\s|$)/;
const SETEXT_UNDERLINE = /^ {0,3}(=+|-+)\s*$/;

/**
 * The model's Markdown made safe to place under a story in the Markdown digest: raw HTML is
 * escaped outside code (a viewer would otherwise run its <script> or <img onerror>), images are
 * defused, headings are demoted two levels (at least to ###) so none competes with a story's
 * `##`, and a code fence left open is closed so it cannot swallow the rest of the digest.
 * Link reference definitions that do not point at the web are defused wherever they sit (in a
 * quote, a list item, nested), however long their label and whatever it holds; should a
 * CommonMark parser still find one in the result, every bracket outside code is escaped instead.
 */
export function modelTextToMarkdown(text: string): string {
  const safe = rewrite(text, defuse);
  return nonWebReference(safe) ? rewrite(text, defuseAllBrackets) : safe;
}

function rewrite(text: string, defuseText: (text: string) => string): string {
  const lines = stripControl(text).split("\n");
  const out: string[] = [];
  let fence: string | null = null;
  for (const [i, line] of lines.entries()) {
    const opener = FENCE.exec(line)?.[1];
    if (fence !== null) {
      out.push(line);
      if (opener && opener[0] === fence[0] && opener.length >= fence.length) fence = null;
      continue;
    }
    if (opener) {
      fence = opener;
      out.push(line);
      continue;
    }
    const underline = SETEXT_UNDERLINE.exec(line)?.[1];
    const previous = out.at(-1) ?? "";
    if (underline && i > 0 && previous.trim() !== "" && !/^\s*([-*+]|\d+[.)])\s/.test(previous)) {
      out[out.length - 1] = `${underline.startsWith("=") ? "###" : "####"} ${previous.trim()}`;
      continue;
    }
    const heading = ATX_HEADING.exec(line);
    const demoted = heading
      ? line.replace(
          ATX_HEADING,
          `${heading[1]}${"#".repeat(Math.min(6, Math.max(3, (heading[2]?.length ?? 1) + 2)))}`,
        )
      : line;
    out.push(outsideCodeSpans(defuseDefinition(demoted), defuseText));
  }
  if (fence !== null) out.push(fence);
  return out.join("\n");
}

/**
 * A bracket opening a line, after any container markers CommonMark allows before a reference
 * definition: quotes (`>`), list items (`-`, `*`, `+`, `1.`, `1)`), nested, and the indentation
 * of a list item's continuation. Unless what follows is a one-line definition of a web address
 * (`[1]: https://…`) or an inline web link (`[site](https://…)`), it may open a definition of
 * anything else, whatever the viewer: a label of any length (marked has no 999-character
 * limit), across lines, holding code spans (definitions are found before code spans are). So it
 * is escaped, which costs a backslash at worst: `\[1] Something` still reads `[1] Something`.
 */
const DEFINITION_OPENER =
  /^((?:[ \t]*(?:>|[-*+](?=[ \t]|$)|\d{1,9}[.)](?=[ \t]|$)))*[ \t]*)\[(?![^[\]\n]*\]:[ \t]*<?https?:)(?![^[\]\n]*\]\(\s*<?https?:)/i;

/** The line with a bracket that could open a non-web reference definition escaped. */
function defuseDefinition(line: string): string {
  return line.replace(DEFINITION_OPENER, "$1\\[");
}

/**
 * Escapes what would become HTML, an image or a non-web link outside code: inline links, and
 * reference definitions whose target is not a web address.
 */
function defuse(text: string): string {
  return text
    .replace(/</g, "&lt;")
    .replace(/!\[/g, "!\\[")
    .replace(/\]\((?!\s*<?https?:)/gi, "]\\(");
}

/** The fallback: no bracket outside code can open a link, an image or a definition. */
function defuseAllBrackets(text: string): string {
  return defuse(text).replace(/(?<!\\)\[/g, "\\[");
}

/** A CommonMark parser keeping every link (markdown-it's own filter would hide javascript:). */
const referenceFinder = new MarkdownIt("commonmark");
referenceFinder.validateLink = () => true;

/** Whether a CommonMark viewer finds a reference definition pointing anywhere but the web. */
function nonWebReference(markdownText: string): boolean {
  const env: Record<string, unknown> = {};
  referenceFinder.parse(markdownText, env);
  const references = (env.references ?? {}) as Record<string, { href?: string }>;
  return Object.values(references).some((ref) => !/^https?:/i.test(ref.href ?? ""));
}

function outsideCodeSpans(line: string, map: (text: string) => string): string {
  return line
    .split(/(`+[^`]*?`+)/)
    .map((part, i) => (i % 2 === 1 ? part : map(part)))
    .join("");
}

/** True when the text opens with a block (heading, list, quote, fence) a label cannot lead. */
export function startsWithBlock(markdownText: string): boolean {
  return /^\s*(#{1,6}\s|[-*+]\s|\d+[.)]\s|>|```|~~~)/.test(markdownText);
}
