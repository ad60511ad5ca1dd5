import { describeNetworkError } from "../../http/network-error.ts";
import type { AllowList, Resolver } from "../../http/ssrf.ts";
import { USER_AGENT } from "../../version.ts";
import { type Extraction, readArticle } from "./article-extract.ts";
import { BodyTooLargeError, readBodyCapped } from "./body.ts";
import { decodeHtml } from "./charset.ts";
import { fetchGuarded } from "./guarded-fetch.ts";

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
  /** Loopback and private hosts the link and its redirects may go to (DIGEST_ALLOWED_HOSTS). */
  allow: AllowList;
  /** DNS for the SSRF check; tests pass one. */
  resolve?: Resolver;
  /** Aborts the download (Ctrl-C). */
  signal?: AbortSignal;
}

const HTML_TYPES = new Set(["text/html", "application/xhtml+xml"]);

/**
 * Downloads an article and extracts its readable text with Readability on linkedom. Never
 * throws: a failure (HTTP error, timeout, not HTML, too big, nothing readable) is a reason.
 */
export async function fetchArticle(url: string, options: ArticleOptions): Promise<ArticleResult> {
  const { timeoutMs, maxBytes } = options;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
  try {
    const fetched = await fetchGuarded(url, {
      allow: options.allow,
      resolve: options.resolve,
      fetch: options.fetch,
      signal,
      headers: {
        "user-agent": options.userAgent ?? USER_AGENT,
        accept: "text/html,application/xhtml+xml;q=0.9,*/*;q=0.1",
      },
    });
    if (!fetched.ok) return failed(fetched.reason);
    const response = fetched.response;
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
    return readArticle(html, fetched.url);
  } catch (error) {
    if (options.signal?.aborted) return failed("the digest was interrupted");
    if (timeout.aborted) return failed(`no answer within ${timeoutMs} ms`);
    return failed(`the download failed (${describeNetworkError(error, url)})`);
  }
}

function failed(reason: string): ArticleResult {
  return { ok: false, reason, description: null };
}

function mediaType(contentType: string | null): string {
  return (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}
