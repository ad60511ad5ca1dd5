import { Readability } from "@mozilla/readability";
import { parseHTML } from "linkedom";
import { stripControl } from "../../text/control.ts";
import { htmlToText } from "./html-text.ts";

/** What a page gave: an article, or a reason it is not one (with the page's description). */
export type Extraction =
  | { ok: true; title: string | null; text: string; description: string | null }
  | { ok: false; reason: string; description: string | null };

/** Fewer words than this is a stub, a teaser or an error page, not an article. */
export const MIN_ARTICLE_WORDS = 80;

// Phrases of pages that show nothing without JavaScript, or only an error or a bot check.
const JAVASCRIPT_WALL =
  /\b(enable javascript|javascript is (disabled|required|not enabled)|turn on javascript|requires javascript|something went wrong|unsupported browser|browser is not supported|checking your browser|verify you are (a )?human|are you a robot|just a moment\.\.\.|access denied)\b/i;
// Phrases that end a paywall's teaser.
const PAYWALL =
  /\b(subscribe (now )?to (continue|keep) reading|to continue reading|already a subscriber|subscribers only|for subscribers|sign in to (continue|read)|create a free account to (continue|read)|become a member to (continue|read)|this (article|story) is (only )?available to (subscribers|members))\b/i;
// schema.org's markup for paywalled content, which news sites give search engines.
const NOT_FREE = /"isAccessibleForFree"\s*:\s*(false|"false")/i;

/**
 * Runs Readability over a page and decides whether what it found is an article worth
 * summarising. JavaScript walls, paywall teasers, video pages, pages of links and stubs are
 * refused with a reason, so the digest shows the page's own description instead of a summary
 * of its boilerplate. Link addresses are left out of the text (the words stay).
 */
export function readArticle(html: string, url: string): Extraction {
  const doc = parsePage(html);
  const description = pageDescription(doc);
  const videoPage = /^video\b/i.test(metaContent(doc, ["og:type"]) ?? "");
  const notFree = NOT_FREE.test(html);
  // Readability resolves relative links against baseURI, which linkedom leaves unset.
  for (const key of ["baseURI", "documentURI"]) {
    Object.defineProperty(doc, key, { value: url, configurable: true });
  }
  const article = new Readability(doc).parse();
  const content = article?.content ?? "";
  const text = content ? htmlToText(content, { linkUrls: false }) : "";
  const refusal = junkReason({ text, content, videoPage, notFree });
  if (refusal !== null) return { ok: false, reason: refusal, description };
  return { ok: true, title: article?.title ?? null, text, description };
}

/**
 * The page as a document. linkedom makes no <html> element of a page without the tag (HTML
 * lets it be left out), an empty one or plain text, and Readability then throws or finds
 * nothing: such a page is read as the body of one, as a browser reads it.
 */
function parsePage(html: string): Document {
  const { document } = parseHTML(html);
  if (document.documentElement?.localName === "html") return document as unknown as Document;
  const content = html.replace(/^\s*<!doctype[^>]*>/i, "");
  return parseHTML(`<!doctype html><html><body>${content}</body></html>`)
    .document as unknown as Document;
}

/** Why an extraction is not an article, or null when it is one. Pure, so tested as values. */
export function junkReason(page: {
  text: string;
  content: string;
  videoPage: boolean;
  notFree: boolean;
}): string | null {
  const { text } = page;
  if (page.videoPage) return "it is a video page";
  if (text.trim() === "") return "no readable text was found on the page";
  if (text.length < 1500 && JAVASCRIPT_WALL.test(text)) {
    return "the page shows only a JavaScript, error or bot-check wall";
  }
  if ((page.notFree && text.length < 5000) || (text.length < 3000 && PAYWALL.test(text))) {
    return "the page shows only a paywall teaser";
  }
  if (text.length < 3000 && linkShare(page.content) > 0.5) return "the page is mostly links";
  const words = wordCount(text);
  if (words < MIN_ARTICLE_WORDS) return `the page is too short to be an article (${words} words)`;
  return null;
}

// Scripts written without spaces between words.
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}]/gu;

/** Words of spaced scripts, plus one per two characters of Chinese, Japanese or Thai. */
export function wordCount(text: string): number {
  const unspaced = text.match(UNSPACED)?.length ?? 0;
  const spaced = text.replace(UNSPACED, " ").split(/\s+/).filter(Boolean).length;
  return spaced + Math.floor(unspaced / 2);
}

/** Share of the visible text that sits inside links. */
function linkShare(contentHtml: string): number {
  if (contentHtml === "") return 0;
  const { document } = parseHTML(`<!doctype html><html><body>${contentHtml}</body></html>`);
  const all = (document.body?.textContent ?? "").replace(/\s+/g, "").length;
  if (all === 0) return 0;
  let linked = 0;
  for (const anchor of Array.from(document.querySelectorAll("a"))) {
    linked += (anchor.textContent ?? "").replace(/\s+/g, "").length;
  }
  return linked / all;
}

/** The page's own summary of itself: meta description, Open Graph or Twitter card. */
function pageDescription(doc: Document): string | null {
  const raw = metaContent(doc, ["description", "og:description", "twitter:description"]);
  if (!raw) return null;
  const clean = stripControl(raw).replace(/\s+/g, " ").trim();
  if (clean.length < 20) return null;
  return clean.length > 600 ? `${clean.slice(0, 600).replace(/\s+\S*$/, "")}…` : clean;
}

function metaContent(doc: Document, names: readonly string[]): string | null {
  for (const name of names) {
    for (const meta of Array.from(doc.querySelectorAll("meta"))) {
      const key = (meta.getAttribute("name") ?? meta.getAttribute("property") ?? "").toLowerCase();
      const value = meta.getAttribute("content");
      if (key === name && value && value.trim() !== "") return value;
    }
  }
  return null;
}
