/**
 * A discussion summary's citations: the model cites comments by the ids their lines start with
 * (`[c3]`), and each one becomes a marker holding the comment's page, kept so in the cache and
 * turned into a numbered link by each output. Every quotation is checked word for word against
 * the comment it cites (or, citing none, against the whole thread): one not found loses its
 * quotation marks and is marked, never shown as a quote.
 */
import type { Comment, ThreadNode } from "../types.ts";

/** A citation in a summary as stored: the cited comment's page between these two characters. */
export const CITE_OPEN = "⟦";
export const CITE_CLOSE = "⟧";
/** The markers in a stored summary, each holding an http(s) page. */
export const CITATION = /⟦(https?:\/\/[^⟦⟧\s]+)⟧/g;
/** What a quotation not found in the comments is marked with, in place of its quotation marks. */
export const UNVERIFIED = "(unverified)";

export function citeMarker(url: string): string {
  return `${CITE_OPEN}${url}${CITE_CLOSE}`;
}

/** The summary without its markers: as the model reads it again (an update's earlier summary). */
export function withoutCitations(summary: string): string {
  return summary.replace(CITATION, "").replace(/[ \t]+([.,;:!?])/g, "$1");
}

// `[c3]`, `[c3, c7]`, `[C3; c7]`, `(c3)`: the ids a point draws on, as models write them.
const GROUP = /[[(]\s*(c\d+(?:\s*[,;]\s*c\d+)*)\s*[\])]/gi;
// A quotation in straight or curly double quotes, on one line.
const QUOTE = /"([^"\n]{1,600})"|“([^”\n]{1,600})”/g;

export interface CitationResult {
  summary: string;
  /** Quotations kept, found word for word in the comment they cite. */
  quotesFound: number;
  /** Quotations not found, shown without quotation marks and marked. */
  quotesMarked: number;
  notes: string[];
}

/**
 * The model's answer with its comment ids made markers of the comments' pages (ids it was not
 * shown are dropped) and its quotations checked: `shown` maps the prompt's ids to its comments,
 * `thread` is every comment a quotation citing none may come from.
 */
export function resolveCitations(
  answer: string,
  shown: ReadonlyMap<string, Comment>,
  thread: readonly ThreadNode[],
): CitationResult {
  // Only markers made here are ever links: the model's own brackets of this kind go.
  const text = answer.replaceAll(CITE_OPEN, "").replaceAll(CITE_CLOSE, "");
  let found = 0;
  let marked = 0;
  const lines = text.split("\n").map((line) => {
    const cited = citedIn(line, shown);
    const blockquote = /^\s*>\s?/.exec(line);
    let out = line.replace(
      QUOTE,
      (whole, straight: string | undefined, curly: string | undefined) => {
        const words = (straight ?? curly ?? "").trim();
        const source = sourceOf(words, cited, thread);
        if (source === "none") {
          marked++;
          return `${words} ${UNVERIFIED}`;
        }
        found++;
        // A quotation citing nothing is cited to the comment it came from.
        return source === "cited" || !source.url ? whole : `${whole} ${citeMarker(source.url)}`;
      },
    );
    if (blockquote) {
      const body = out.slice(blockquote[0].length).replace(GROUP, "").trim();
      if (body !== "" && !/⟦|"|“/.test(body) && sourceOf(body, cited, thread) === "none") {
        marked++;
        out = `${body} ${UNVERIFIED}`;
      }
    }
    return out.replace(GROUP, (_whole, ids: string) => markersOf(ids, shown));
  });
  const notes =
    marked === 0
      ? []
      : [
          `${marked === 1 ? "A quotation" : `${marked} quotations`} in the discussion summary could not be found word for word in the comments ${marked === 1 ? "it cites; it is" : "they cite; they are"} shown without quotation marks, marked ${UNVERIFIED}.`,
        ];
  return { summary: tidy(lines.join("\n")), quotesFound: found, quotesMarked: marked, notes };
}

/** The comments a line's citations name. */
function citedIn(line: string, shown: ReadonlyMap<string, Comment>): Comment[] {
  const comments: Comment[] = [];
  for (const match of line.matchAll(GROUP)) {
    for (const id of idsOf(match[1] ?? "")) {
      const comment = shown.get(id);
      if (comment) comments.push(comment);
    }
  }
  return comments;
}

function idsOf(group: string): string[] {
  return group.split(/[,;]/).map((id) => id.trim().toLowerCase());
}

function markersOf(group: string, shown: ReadonlyMap<string, Comment>): string {
  const urls = idsOf(group)
    .map((id) => shown.get(id)?.url)
    .filter((url): url is string => url !== undefined);
  return [...new Set(urls)].map(citeMarker).join("");
}

/**
 * Where a quotation's words are: in a comment its line cites ("cited"), in another comment of
 * the thread when the line cites none, or nowhere.
 */
function sourceOf(
  quote: string,
  cited: readonly Comment[],
  thread: readonly ThreadNode[],
): "cited" | "none" | Comment {
  const words = wordsOf(quote);
  if (words.length === 0) return "cited";
  if (cited.length > 0)
    return cited.some((comment) => contains(comment.text, words)) ? "cited" : "none";
  return findIn(thread, words) ?? "none";
}

function findIn(nodes: readonly ThreadNode[], words: readonly string[]): Comment | undefined {
  for (const node of nodes) {
    if (contains(node.comment.text, words)) return node.comment;
    const inReplies = findIn(node.replies, words);
    if (inReplies) return inReplies;
  }
  return undefined;
}

/** The words in order, as compared: any case, curly or straight apostrophes, no punctuation. */
export function wordsOf(text: string): string[] {
  return text
    .normalize("NFKC")
    .toLowerCase()
    .replace(/[’‘`]/g, "'")
    .split(/[^\p{L}\p{N}']+/u)
    .map((word) => word.replace(/^'+|'+$/g, ""))
    .filter((word) => word !== "");
}

/** Whether `words` appear in the text one after another, word for word. */
function contains(text: string, words: readonly string[]): boolean {
  const haystack = ` ${wordsOf(text).join(" ")} `;
  return haystack.includes(` ${words.join(" ")} `);
}

/** Spaces left by a removed citation: none before punctuation, one between words. */
function tidy(text: string): string {
  return text
    .replace(/[ \t]+(?=[.,;:!?](\s|$))/g, "")
    .replace(/[ \t]{2,}/g, " ")
    .replace(/[ \t]+$/gm, "");
}
