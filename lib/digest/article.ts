import { Readability } from "@mozilla/readability";
import { parseHTML } from "linkedom";
import { USER_AGENT } from "../version.ts";
import { BodyTooLargeError, readBodyCapped } from "./body.ts";
import { htmlToText } from "./html-text.ts";

export type ArticleResult =
  | { ok: true; title: string | null; text: string }
  | { ok: false; reason: string };

export interface ArticleOptions {
  fetch?: typeof fetch;
  timeoutMs: number;
  maxBytes: number;
  userAgent?: string;
}

const HTML_TYPES = new Set(["text/html", "application/xhtml+xml"]);

/**
 * Downloads an article and extracts its readable text with Readability on linkedom. Never
 * throws: a failure (HTTP error, timeout, not HTML, too big, nothing readable) is a reason.
 */
export async function fetchArticle(url: string, options: ArticleOptions): Promise<ArticleResult> {
  const { fetch: doFetch = globalThis.fetch, timeoutMs, maxBytes } = options;
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const response = await doFetch(url, {
      signal,
      redirect: "follow",
      headers: {
        "user-agent": options.userAgent ?? USER_AGENT,
        accept: "text/html,application/xhtml+xml;q=0.9,*/*;q=0.1",
      },
    });
    if (!response.ok) {
      await response.body?.cancel();
      return { ok: false, reason: `the site answered HTTP ${response.status}` };
    }
    const type = mediaType(response.headers.get("content-type"));
    if (!HTML_TYPES.has(type)) {
      await response.body?.cancel();
      return { ok: false, reason: `it is not an HTML page (${type || "no content type"})` };
    }
    const declared = Number(response.headers.get("content-length"));
    if (Number.isFinite(declared) && declared > maxBytes) {
      await response.body?.cancel();
      return { ok: false, reason: `it is too big (${declared} bytes, limit ${maxBytes})` };
    }
    let bytes: Uint8Array;
    try {
      bytes = await readBodyCapped(response, maxBytes);
    } catch (error) {
      if (!(error instanceof BodyTooLargeError)) throw error;
      return { ok: false, reason: `it is too big (more than ${maxBytes} bytes)` };
    }
    const html = decode(bytes, response.headers.get("content-type"));
    return extractReadable(html, response.url || url);
  } catch (error) {
    if (signal.aborted) return { ok: false, reason: `no answer within ${timeoutMs} ms` };
    return {
      ok: false,
      reason: `the download failed (${error instanceof Error ? error.message : String(error)})`,
    };
  }
}

/** Runs Readability over an HTML page and turns the result into plain text. */
export function extractReadable(html: string, url: string): ArticleResult {
  const { document } = parseHTML(html);
  // Readability resolves relative links against baseURI, which linkedom leaves unset.
  const doc = document as unknown as Document;
  for (const key of ["baseURI", "documentURI"]) {
    Object.defineProperty(doc, key, { value: url, configurable: true });
  }
  const article = new Readability(doc).parse();
  const text = article?.content ? htmlToText(article.content) : "";
  if (text.trim() === "") return { ok: false, reason: "no readable text was found on the page" };
  return { ok: true, title: article?.title ?? null, text };
}

function mediaType(contentType: string | null): string {
  return (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

function decode(bytes: Uint8Array, contentType: string | null): string {
  const charset = /charset="?([\w-]+)"?/i.exec(contentType ?? "")?.[1];
  try {
    return new TextDecoder(charset ?? "utf-8").decode(bytes);
  } catch {
    return new TextDecoder("utf-8").decode(bytes);
  }
}
