/** What the digest reads from a story's link, whatever the source: its site, and its identity. */

export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}

/** The site a link is on, as HN shows it beside the title: the host name without `www.`. */
export function siteOf(url: string): string | null {
  try {
    return new URL(url).hostname.replace(/^www\./, "") || null;
  } catch {
    return null;
  }
}

// Parameters that only say where a reader came from: the same article with or without them.
const TRACKING = /^(utm_\w+|ref|fbclid|gclid)$/i;

/**
 * A link as compared across sources: the same article submitted to two sites is one story.
 * http and https, `www.`, a trailing slash, the fragment and tracking parameters do not count.
 */
export function sameLinkKey(url: string): string | null {
  try {
    const link = new URL(url);
    const host = link.hostname.toLowerCase().replace(/^www\./, "");
    const params = [...link.searchParams].filter(([name]) => !TRACKING.test(name));
    const query = params.length === 0 ? "" : `?${new URLSearchParams(params).toString()}`;
    const path = link.pathname.replace(/\/+$/, "");
    return `${host}${link.port ? `:${link.port}` : ""}${path}${query}`;
  } catch {
    return null;
  }
}
