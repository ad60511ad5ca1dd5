import { describe, expect, test } from "bun:test";
import { extractReadable, fetchArticle } from "../../lib/digest/article.ts";
import { USER_AGENT } from "../../lib/version.ts";
import { articleHtml, startFakeArticleSite } from "../fakes/article-site.ts";

const PARAGRAPHS = Array.from(
  { length: 6 },
  (_, i) =>
    `Paragraph ${i + 1} explains how the new allocator cuts latency, with numbers from a week of production traffic &amp; a few caveats.`,
);
const options = { timeoutMs: 2_000, maxBytes: 100_000 };

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
    expect(await fetchArticle(`${site.url}/paywall`, options)).toEqual({
      ok: false,
      reason: "the site answered HTTP 403",
    });
  });

  test("gives up on a site that does not answer within the timeout", async () => {
    using site = startFakeArticleSite({ "/slow": { hang: true } });
    expect(await fetchArticle(`${site.url}/slow`, { ...options, timeoutMs: 100 })).toEqual({
      ok: false,
      reason: "no answer within 100 ms",
    });
  });

  test("refuses a PDF", async () => {
    using site = startFakeArticleSite({
      "/paper.pdf": { contentType: "application/pdf", body: "%PDF-1.7" },
    });
    expect(await fetchArticle(`${site.url}/paper.pdf`, options)).toEqual({
      ok: false,
      reason: "it is not an HTML page (application/pdf)",
    });
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
    expect(await fetchArticle(`${site.url}/huge`, options)).toEqual({
      ok: false,
      reason: "it is too big (more than 100000 bytes)",
    });
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

describe("extractReadable()", () => {
  test("says so when a page has no readable text", () => {
    expect(
      extractReadable("<html><body><script>app()</script></body></html>", "https://x/"),
    ).toEqual({ ok: false, reason: "no readable text was found on the page" });
  });

  test("writes relative links out in full against the page's URL", () => {
    const html = articleHtml("Links", [...PARAGRAPHS, 'See <a href="/docs/guide">the guide</a>.']);
    const result = extractReadable(html, "https://example.com/post/1");
    expect(result.ok && result.text).toContain("See the guide (https://example.com/docs/guide).");
  });

  test("keeps code blocks of an article", () => {
    const html = articleHtml("Code", [
      ...PARAGRAPHS,
      "</p><pre><code>fn main() {\n    println!(&quot;hi&quot;);\n}</code></pre><p>After the code.",
    ]);
    const result = extractReadable(html, "https://example.com/code");
    expect(result.ok && result.text).toContain('```\nfn main() {\n    println!("hi");\n}\n```');
  });
});
