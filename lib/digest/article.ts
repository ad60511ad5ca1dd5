import { USER_AGENT } from "../version.ts";
import { type Extraction, readArticle } from "./article-extract.ts";
import { BodyTooLargeError, readBodyCapped } from "./body.ts";
import { decodeHtml } from "./charset.ts";

/**
 * An article, or why there is none. `description` is the page's own description, when the page
 * was read but is no article (a JavaScript wall, a paywall teaser, a video page…).
 */
export type ArticleResult = Extraction;

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
      return failed(`the site answered HTTP ${response.status}`);
    }
    const type = mediaType(response.headers.get("content-type"));
    if (!HTML_TYPES.has(type)) {
      await response.body?.cancel();
      return failed(`it is not an HTML page (${type || "no content type"})`);
    }
    const declared = Number(response.headers.get("content-length"));
    if (Number.isFinite(declared) && declared > maxBytes) {
      await response.body?.cancel();
      return failed(`it is too big (${declared} bytes, limit ${maxBytes})`);
    }
    let bytes: Uint8Array;
    try {
      bytes = await readBodyCapped(response, maxBytes);
    } catch (error) {
      if (!(error instanceof BodyTooLargeError)) throw error;
      return failed(`it is too big (more than ${maxBytes} bytes)`);
    }
    const html = decodeHtml(bytes, response.headers.get("content-type"));
    return readArticle(html, response.url || url);
  } catch (error) {
    if (signal.aborted) return failed(`no answer within ${timeoutMs} ms`);
    return failed(
      `the download failed (${error instanceof Error ? error.message : String(error)})`,
    );
  }
}

function failed(reason: string): ArticleResult {
  return { ok: false, reason, description: null };
}

function mediaType(contentType: string | null): string {
  return (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}
