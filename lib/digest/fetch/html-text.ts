import { parseHTML } from "linkedom";
import { stripControl } from "../../text/control.ts";

const PARAGRAPH = { kind: "paragraph" } as const;
const LINE = { kind: "line" } as const;
type Piece = string | typeof PARAGRAPH | typeof LINE | { kind: "pre"; text: string };

const BLOCKS = new Set([
  "p",
  "div",
  "section",
  "article",
  "main",
  "header",
  "footer",
  "aside",
  "blockquote",
  "figure",
  "figcaption",
  "table",
  "tr",
  "ul",
  "ol",
  "dl",
  "dd",
  "dt",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "hr",
]);
const SKIPPED = new Set(["script", "style", "noscript", "template", "iframe", "svg", "head"]);

export interface HtmlTextOptions {
  /**
   * Write each link's address after its words (the default, for comments and posts, where a
   * link is often the point). Off for articles: a reader sees the words, not the URLs, and
   * URLs would take a large share of the model's budget.
   */
  linkUrls?: boolean;
}

/**
 * Turns the HTML of an HN comment, an Ask HN text or an extracted article into clean plain
 * text: entities decoded, paragraphs as blank lines, links as text (with their address, the
 * full href when the visible text is cut with "...", unless `linkUrls` is off), <pre> code
 * kept verbatim in a fenced block, and terminal control characters removed.
 */
export function htmlToText(html: string, options: HtmlTextOptions = {}): string {
  const { document } = parseHTML(`<!doctype html><html><body>${html}</body></html>`);
  const pieces: Piece[] = [];
  walk(document.body as unknown as Node, pieces, options.linkUrls ?? true);
  return stripControl(render(pieces));
}

function walk(node: Node, pieces: Piece[], linkUrls: boolean): void {
  for (const child of Array.from(node.childNodes)) {
    if (child.nodeType === 3) {
      pieces.push((child as Text).data);
      continue;
    }
    if (child.nodeType !== 1) continue;
    const element = child as Element;
    const tag = element.localName.toLowerCase();
    if (SKIPPED.has(tag)) continue;
    if (tag === "br") {
      pieces.push(LINE);
    } else if (tag === "pre") {
      pieces.push(PARAGRAPH, { kind: "pre", text: element.textContent ?? "" }, PARAGRAPH);
    } else if (tag === "a" && linkUrls) {
      pieces.push(linkText(element));
    } else if (tag === "li") {
      pieces.push(LINE, "- ");
      walk(element, pieces, linkUrls);
      pieces.push(LINE);
    } else if (BLOCKS.has(tag)) {
      pieces.push(PARAGRAPH);
      walk(element, pieces, linkUrls);
      pieces.push(PARAGRAPH);
    } else {
      walk(element, pieces, linkUrls);
    }
  }
}

/** HN cuts long link texts with "..."; the href is then the only complete form of the link. */
export function linkText(element: Element): string {
  const visible = (element.textContent ?? "").replace(/\s+/g, " ").trim();
  const href = (element.getAttribute("href") ?? "").trim();
  if (!/^(https?:|mailto:)/i.test(href)) return visible;
  if (visible === "" || visible === href) return href;
  const cut = visible.match(/^(.*?)(\.\.\.|…)$/);
  if (cut && href.startsWith(cut[1] ?? "")) return href;
  if (/^(https?:\/\/|www\.)/i.test(visible)) return href;
  return `${visible} (${href})`;
}

function render(pieces: Piece[]): string {
  const blocks: string[] = [];
  let lines: string[] = [];
  let line = "";
  const endLine = () => {
    const cleaned = line.replace(/\s+/g, " ").trim();
    if (cleaned !== "") lines.push(cleaned);
    line = "";
  };
  const endParagraph = () => {
    endLine();
    if (lines.length > 0) blocks.push(lines.join("\n"));
    lines = [];
  };
  for (const piece of pieces) {
    if (typeof piece === "string") line += piece;
    else if (piece.kind === "line") endLine();
    else if (piece.kind === "paragraph") endParagraph();
    else {
      endParagraph();
      const code = piece.text.replace(/^\n+|\s+$/g, "");
      if (code.trim() !== "") blocks.push(`\`\`\`\n${code.replace(/```/g, "'''")}\n\`\`\``);
    }
  }
  endParagraph();
  return blocks.join("\n\n");
}
