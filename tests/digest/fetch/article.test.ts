import { describe, expect, test } from "bun:test";
import { fetchArticle } from "../../../lib/digest/fetch/article.ts";
import { junkReason, readArticle, wordCount } from "../../../lib/digest/fetch/article-extract.ts";
import { parseAllowList } from "../../../lib/http/ssrf.ts";
import { USER_AGENT } from "../../../lib/version.ts";
import {
  articleHtml,
  javascriptWallHtml,
  latin1Bytes,
  paywallTeaserHtml,
  shiftJisBytes,
  startFakeArticleSite,
  videoPageHtml,
} from "../../fakes/article-site.ts";
import { linkHeavyArticle } from "../../fakes/digest-corpus.ts";

const PARAGRAPHS = Array.from(
  { length: 6 },
  (_, i) =>
    `Paragraph ${i + 1} explains how the new allocator cuts latency, with numbers from a week of production traffic &amp; a few caveats.`,
);
// The fake sites are on 127.0.0.1, which the SSRF guard refuses unless allowed; names resolve
// to a public address without asking DNS.
const options = {
  timeoutMs: 2_000,
  maxBytes: 100_000,
  allow: parseAllowList("127.0.0.1"),
  resolve: async () => ["93.184.215.14"],
};

/** fetchArticle()'s and readArticle()'s answer for a page refused for `reason`. */
function refused(reason: string, description: string | null = null) {
  return { ok: false as const, reason, description };
}

describe("fetchArticle()", () => {
  test("extracts the readable text of an HTML article, without the navigation", async () => {
    using site = startFakeArticleSite({
      "/post": { body: articleHtml("Faster malloc", PARAGRAPHS) },
    });
    const result = await fetchArticle(`${site.url}/post`, options);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.title).toBe("Faster malloc");
    expect(result.text).toContain("Paragraph 1 explains how the new allocator cuts latency");
    expect(result.text).toContain("& a few caveats.");
    expect(result.text).toContain("\n\nParagraph 2");
    expect(result.text).not.toContain("About");
    expect(result.text).not.toContain("Copyright");
  });

  test("sends a User-Agent naming the tool and its version", async () => {
    using site = startFakeArticleSite({ "/post": { body: articleHtml("T", PARAGRAPHS) } });
    await fetchArticle(`${site.url}/post`, options);
    expect(site.userAgents).toEqual([USER_AGENT]);
    expect(USER_AGENT).toMatch(/^hn-digest\/\d+\.\d+\.\d+ /);
  });

  test("reports a 403 as a reason", async () => {
    using site = startFakeArticleSite({ "/paywall": { status: 403, body: "Forbidden" } });
    expect(await fetchArticle(`${site.url}/paywall`, options)).toEqual(
      refused("the site answered HTTP 403"),
    );
  });

  test("gives up on a site that does not answer within the timeout", async () => {
    using site = startFakeArticleSite({ "/slow": { hang: true } });
    expect(await fetchArticle(`${site.url}/slow`, { ...options, timeoutMs: 100 })).toEqual(
      refused("no answer within 100 ms"),
    );
  });

  test("refuses a PDF", async () => {
    using site = startFakeArticleSite({
      "/paper.pdf": { contentType: "application/pdf", body: "%PDF-1.7" },
    });
    expect(await fetchArticle(`${site.url}/paper.pdf`, options)).toEqual(
      refused("it is not an HTML page (application/pdf)"),
    );
  });

  test("refuses plain text and a missing content type", async () => {
    using site = startFakeArticleSite({
      "/notes.txt": { contentType: "text/plain", body: "hello" },
    });
    expect(await fetchArticle(`${site.url}/notes.txt`, options)).toMatchObject({
      reason: "it is not an HTML page (text/plain)",
    });
  });

  test("stops reading a body that grows past the size cap", async () => {
    using site = startFakeArticleSite({ "/huge": { streamBytes: 50_000_000 } });
    expect(await fetchArticle(`${site.url}/huge`, options)).toEqual(
      refused("it is too big (more than 100000 bytes)"),
    );
  });

  test("refuses at once a body whose declared length is over the cap", async () => {
    let cancelled = false;
    const body = new ReadableStream({
      cancel() {
        cancelled = true;
      },
    });
    const fakeFetch = (async () =>
      new Response(body, {
        headers: { "content-type": "text/html", "content-length": "5000000" },
      })) as unknown as typeof fetch;
    expect(await fetchArticle("https://example.com/big", { ...options, fetch: fakeFetch })).toEqual(
      {
        ok: false,
        reason: "it is too big (5000000 bytes, limit 100000)",
        description: null,
      },
    );
    expect(cancelled).toBe(true);
  });

  test("reports a refused connection as a reason, not an exception", async () => {
    const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
    const url = `http://127.0.0.1:${server.port}/gone`;
    server.stop(true);
    const result = await fetchArticle(url, options);
    expect(result).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^the download failed/),
    });
  });

  test("decodes the charset the server declares", async () => {
    const html = articleHtml("Caf\u00e9", PARAGRAPHS);
    const bytes = Uint8Array.from(html, (ch) => ch.charCodeAt(0));
    const fakeFetch = (async () =>
      new Response(bytes, {
        headers: { "content-type": "text/html; charset=iso-8859-1" },
      })) as unknown as typeof fetch;
    const result = await fetchArticle("https://example.com/", { ...options, fetch: fakeFetch });
    expect(result).toMatchObject({ ok: true, title: "Café" });
  });
});

describe("fetchArticle(): charsets", () => {
  const FRENCH = Array.from(
    { length: 12 },
    (_, i) =>
      `Paragraphe ${i + 1} : le café était délicieux à Noël, et l'été à Besançon garde ses crêpes, ses élèves et ses châteaux façon Renaissance.`,
  );

  /** The text fetchArticle() read from `bytes` served as text/html with no charset. */
  async function textRead(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
    using site = startFakeArticleSite({ "/page": { contentType: "text/html", bytes } });
    const result = await fetchArticle(`${site.url}/page`, options);
    if (!result.ok) throw new Error(`Not read: ${result.reason}`);
    expect(result.text).not.toContain("\uFFFD");
    return result.text;
  }

  test("decodes a Latin-1 page whose charset is declared only in <meta http-equiv>", async () => {
    const html = articleHtml("Café", FRENCH).replace(
      '<meta charset="utf-8">',
      '<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">',
    );
    expect(await textRead(latin1Bytes(html))).toContain("le café était délicieux à Noël");
  });

  test("decodes a Shift_JIS page whose charset is declared only in <meta charset>", async () => {
    const sentence = "これはにほんごのぶんしょうです、とてもながいぶんしょうです。";
    const paragraphs = Array.from(
      { length: 10 },
      (_, i) => `${i + 1} 日本語 ${sentence.repeat(3)}`,
    );
    const html = articleHtml("Nihongo", paragraphs).replace(
      '<meta charset="utf-8">',
      '<meta charset="Shift_JIS">',
    );
    expect(await textRead(shiftJisBytes(html))).toContain(`日本語 ${sentence}`);
  });

  test("lets the Content-Type header win over <meta>, and a byte order mark over both", async () => {
    const html = articleHtml("Café", FRENCH).replace(
      '<meta charset="utf-8">',
      '<meta charset="shift_jis">',
    );
    const bom = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(html)]);
    using site = startFakeArticleSite({
      "/header": { contentType: "text/html; charset=windows-1252", bytes: latin1Bytes(html) },
      "/bom": { contentType: "text/html; charset=windows-1252", bytes: bom },
    });
    for (const path of ["/header", "/bom"]) {
      const result = await fetchArticle(`${site.url}${path}`, options);
      expect(result.ok && result.text).toContain("le café était délicieux à Noël");
    }
  });

  test("reads UTF-8 when nothing is declared", async () => {
    const html = articleHtml("Café", FRENCH).replace('<meta charset="utf-8">', "");
    expect(await textRead(new TextEncoder().encode(html))).toContain(
      "le café était délicieux à Noël",
    );
  });
});

describe("readArticle()", () => {
  test("drops link addresses from a link-heavy page and keeps every anchor's words", () => {
    const page = linkHeavyArticle({ paragraphs: 20 });
    const result = readArticle(page.html, "https://example.com/docs");
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.text).not.toContain("https://");
    expect(result.text).not.toContain("utm_source");
    for (const paragraph of page.paragraphs) expect(result.text).toContain(paragraph.text);
  });

  test.each([
    [
      "a JavaScript wall, offering the page's description instead",
      javascriptWallHtml,
      "A tool that turns notes into diagrams.",
      "the page shows only a JavaScript, error or bot-check wall",
    ],
    [
      "a paywall's teaser",
      paywallTeaserHtml,
      "The city council voted to close the old bridge to cars.",
      "the page shows only a paywall teaser",
    ],
  ])("refuses %s", (_, page, description, reason) => {
    expect(readArticle(page(description), "https://x.example/")).toEqual(
      refused(reason, description),
    );
  });

  test("refuses a video page, whose only text is the site's footer", () => {
    const result = readArticle(
      videoPageHtml("A talk on making databases fast."),
      "https://video.example/",
    );
    expect(result).toMatchObject({ ok: false, reason: "it is a video page" });
  });

  test("says when a page has no readable text and no description", () => {
    expect(readArticle("<html><body><script>app()</script></body></html>", "https://x/")).toEqual(
      refused("no readable text was found on the page"),
    );
  });

  test("says so of an empty page or one of plain text, instead of throwing", () => {
    for (const html of ["", "  \n", "Moved."]) {
      expect(readArticle(html, "https://x/")).toMatchObject({ ok: false });
    }
  });

  test("reads a page that leaves out <html>, <head> and <body>, as HTML allows", () => {
    const html = `<!doctype html><meta charset="utf-8"><title>Notes</title>${PARAGRAPHS.map((p) => `<p>${p}</p>`).join("")}`;
    const result = readArticle(html, "https://x/");
    expect(result.ok).toBe(true);
    for (const paragraph of PARAGRAPHS) {
      expect(result.ok && result.text).toContain(paragraph.replace("&amp;", "&"));
    }
  });

  test("keeps code blocks of an article", () => {
    const html = articleHtml("Code", [
      ...PARAGRAPHS,
      "</p><pre><code>fn main() {\n    println!(&quot;hi&quot;);\n}</code></pre><p>After the code.",
    ]);
    const result = readArticle(html, "https://example.com/code");
    expect(result.ok && result.text).toContain('```\nfn main() {\n    println!("hi");\n}\n```');
  });
});

describe("junkReason()", () => {
  const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(" ");
  const page = { content: "<p>x</p>", videoPage: false, notFree: false };

  test("passes an ordinary article, even one about JavaScript or subscriptions", () => {
    expect(junkReason({ ...page, text: words(300) })).toBeNull();
    const long = `${words(400)} Please enable JavaScript. Subscribe to continue reading. ${words(200)}`;
    expect(junkReason({ ...page, text: long })).toBeNull();
  });

  test("refuses stubs, pages of links and paywalled pages", () => {
    expect(junkReason({ ...page, text: words(40) })).toBe(
      "the page is too short to be an article (40 words)",
    );
    const links = `<p>${Array.from({ length: 60 }, (_, i) => `<a href="/${i}">link ${i}</a>`).join(" ")}</p>`;
    expect(junkReason({ ...page, content: links, text: words(120) })).toBe(
      "the page is mostly links",
    );
    expect(junkReason({ ...page, notFree: true, text: words(150) })).toBe(
      "the page shows only a paywall teaser",
    );
  });

  test("counts words of Chinese and Japanese, which have no spaces", () => {
    expect(wordCount("日本語のぶんしょう")).toBe(4);
    expect(wordCount("two words")).toBe(2);
  });
});

describe("fetchArticle(): the SSRF guard", () => {
  const page = { body: articleHtml("Post", PARAGRAPHS) };

  test("refuses a link to a loopback address that is not allowed, before connecting", async () => {
    using site = startFakeArticleSite({ "/post": page });
    const port = new URL(site.url).port;
    const result = await fetchArticle(`${site.url}/post`, { ...options, allow: [] });
    expect(result).toEqual(
      refused(
        `the link was not followed (refused 127.0.0.1 (loopback): set DIGEST_ALLOWED_HOSTS=127.0.0.1:${port} to allow it)`,
      ),
    );
    expect(site.requests).toEqual([]);
  });

  test("refuses a name that resolves to the cloud metadata address", async () => {
    let fetched = 0;
    const countingFetch = (async () => {
      fetched++;
      return new Response("secret");
    }) as unknown as typeof fetch;
    const result = await fetchArticle("http://metadata.example/latest/meta-data/", {
      ...options,
      fetch: countingFetch,
      resolve: async () => ["169.254.169.254"],
    });
    expect(result.ok).toBe(false);
    expect(!result.ok && result.reason).toStartWith(
      "the link was not followed (refused metadata.example, which resolves to 169.254.169.254 (linkLocal)",
    );
    expect(fetched).toBe(0);
  });

  test("refuses a redirect to a private address, without following it", async () => {
    using inside = startFakeArticleSite({ "/admin": page });
    using outside = startFakeArticleSite({ "/go": { redirect: `${inside.url}/admin` } });
    const allow = parseAllowList(`127.0.0.1:${new URL(outside.url).port}`);
    const result = await fetchArticle(`${outside.url}/go`, { ...options, allow });
    expect(result.ok).toBe(false);
    expect(!result.ok && result.reason).toStartWith(
      `it redirects to ${inside.url}/admin, which was not followed (refused 127.0.0.1 (loopback)`,
    );
    expect(outside.requests).toEqual(["/go"]);
    expect(inside.requests).toEqual([]);
  });

  test("follows an allowed redirect and connects to the checked address, keeping the host name", async () => {
    using site = startFakeArticleSite({ "/old": { redirect: "/post" }, "/post": page });
    const port = new URL(site.url).port;
    const result = await fetchArticle(`http://blog.example:${port}/old`, {
      ...options,
      allow: parseAllowList(`blog.example:${port}`),
      // The only answer the name has: no real DNS is asked, and the request must go here.
      resolve: async () => ["127.0.0.1"],
    });
    expect(result.ok).toBe(true);
    expect(site.requests).toEqual(["/old", "/post"]);
    expect(site.hosts).toEqual([`blog.example:${port}`, `blog.example:${port}`]);
  });

  test("gives up after five redirects", async () => {
    using site = startFakeArticleSite({ "/loop": { redirect: "/loop" } });
    expect(await fetchArticle(`${site.url}/loop`, options)).toMatchObject({
      ok: false,
      reason: "it redirects more than 5 times",
    });
    expect(site.requests).toHaveLength(6);
  });
});
