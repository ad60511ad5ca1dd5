import { describe, expect, test } from "bun:test";
import { escapeHtml, htmlRenderer } from "../../../lib/digest/render/html.ts";
import { jsonRenderer } from "../../../lib/digest/render/json.ts";
import {
  escapeMarkdown,
  markdownRenderer,
  markdownUrl,
} from "../../../lib/digest/render/markdown.ts";
import type { Renderer } from "../../../lib/digest/render/types.ts";
import type { DigestMeta, StoryDigest } from "../../../lib/digest/types.ts";
import { allocatorDigest } from "../../fakes/story-digest.ts";

const meta: DigestMeta = {
  generatedAt: "2025-08-03T18:54:41.000Z",
  model: "llama3.2",
  total: 2,
  newCount: 1,
  lastRunAt: "2025-08-02T18:00:00.000Z",
};

const linked = allocatorDigest({
  articleSummary: "The allocator is faster.\n\nIt uses per-thread caches.",
  discussionSummary: "Commenters agree it is faster.",
  coverage: { commentsShown: 104, commentsTotal: 230, articleShare: 0.41 },
  pointsSinceLastRun: 40,
  articleWords: 1380,
});

const askHn: StoryDigest = {
  story: {
    id: 102,
    title: "Ask HN: Tabs or spaces?",
    url: null,
    storyText: "Well?",
    author: null,
    points: 1,
    numComments: 1,
    type: "ask",
    site: null,
    createdAt: 1754243681,
  },
  hnUrl: "https://news.ycombinator.com/item?id=102",
  articleSummary: "The poster asks about indentation.",
  articleSource: "post",
  discussionSummary: null,
  notes: ["Discussion summary failed: Ollama answered HTTP 500: boom."],
  isNew: true,
  pointsSinceLastRun: null,
};

function renderAll(renderer: Renderer, stories: StoryDigest[]): string {
  return [
    renderer.begin(meta),
    ...stories.map((s, i) => renderer.story(s, i)),
    renderer.end(),
  ].join("");
}

describe("markdownRenderer()", () => {
  test("writes title, links, points, comments, both summaries and notes", () => {
    expect(renderAll(markdownRenderer({ timeZone: "UTC" }), [linked, askHn])).toBe(
      [
        "# Hacker News digest",
        "",
        "Sunday 3 August 2025, 18:54 UTC · llama3.2 · 2 stories · 1 new since the last run",
        "",
        "## 1. [A faster allocator](https://example.com/malloc)",
        "",
        "Article · example.com · 6 min read · 3 hours ago · by ada · 512 points (+40 since the last run) · 230 comments · [HN discussion](https://news.ycombinator.com/item?id=101)",
        "",
        "**Article.** The allocator is faster.",
        "",
        "It uses per-thread caches.",
        "",
        "**Discussion.** Commenters agree it is faster.",
        "",
        "## 2. Ask HN: Tabs or spaces?",
        "",
        "**New** · Ask HN · 1 hour ago · 1 point · 1 comment · [HN discussion](https://news.ycombinator.com/item?id=102)",
        "",
        "**Post.** The poster asks about indentation.",
        "",
        "**Discussion.** _No summary._",
        "",
        "Notes:",
        "",
        "- Discussion summary failed: Ollama answered HTTP 500: boom.",
        "",
      ].join("\n"),
    );
  });

  test("writes each story on its own, ready to stream", () => {
    const renderer = markdownRenderer();
    renderer.begin(meta);
    expect(renderer.story(linked, 0)).toStartWith("\n## 1. [A faster allocator]");
    expect(renderer.end()).toBe("");
  });

  test("strips control characters from titles and summaries", () => {
    const evil: StoryDigest = {
      ...linked,
      story: { ...linked.story, title: "Evil\u001b]0;owned\u0007 title" },
      articleSummary: "Text\u001b[2J with \u009b2J escapes",
    };
    const out = markdownRenderer().story(evil, 0);
    for (const control of ["\u001b", "\u0007", "\u009b"]) expect(out).not.toContain(control);
    expect(out).toContain("[Evil title](https://example.com/malloc)");
    expect(out).toContain("**Article.** Text with  escapes\n");
  });

  test("escapes Markdown in titles and odd characters in links", () => {
    expect(escapeMarkdown("C* [beta] <b>_x_</b> `y`")).toBe(
      "C\\* \\[beta\\] \\<b\\>\\_x\\_\\</b\\> \\`y\\`",
    );
    expect(markdownUrl("https://en.wikipedia.org/wiki/Rust_(language) x")).toBe(
      "https://en.wikipedia.org/wiki/Rust_%28language%29%20x",
    );
  });
});

describe("jsonRenderer()", () => {
  test("prints exactly one JSON document with the documented fields", () => {
    const renderer = jsonRenderer();
    expect(renderer.begin(meta)).toBe("");
    expect(renderer.story(linked, 0)).toBe("");
    expect(renderer.story(askHn, 1)).toBe("");
    const text = renderer.end();
    expect(JSON.parse(text)).toEqual({
      generatedAt: "2025-08-03T18:54:41.000Z",
      model: "llama3.2",
      newSinceLastRun: 1,
      lastRunAt: "2025-08-02T18:00:00.000Z",
      malformedHits: 0,
      sources: ["hn"],
      stories: [
        {
          id: 101,
          title: "A faster allocator",
          url: "https://example.com/malloc",
          hnUrl: "https://news.ycombinator.com/item?id=101",
          source: "hn",
          discussions: [
            {
              source: "hn",
              id: 101,
              url: "https://news.ycombinator.com/item?id=101",
              points: 512,
              comments: 230,
            },
          ],
          tags: [],
          type: "article",
          site: "example.com",
          author: "ada",
          createdAt: "2025-08-03T15:54:41.000Z",
          age: "3 hours ago",
          points: 512,
          pointsSinceLastRun: 40,
          numComments: 230,
          articleWords: 1380,
          isNew: false,
          articleSummary: "The allocator is faster.\n\nIt uses per-thread caches.",
          articleSource: "article",
          discussionSummary: "Commenters agree it is faster.",
          discussionCitations: [],
          commentsShown: 104,
          commentsTotal: 230,
          articleShare: 0.41,
          notes: [],
        },
        {
          id: 102,
          title: "Ask HN: Tabs or spaces?",
          url: null,
          hnUrl: "https://news.ycombinator.com/item?id=102",
          source: "hn",
          discussions: [
            {
              source: "hn",
              id: 102,
              url: "https://news.ycombinator.com/item?id=102",
              points: 1,
              comments: 1,
            },
          ],
          tags: [],
          type: "ask",
          site: null,
          author: null,
          createdAt: "2025-08-03T17:54:41.000Z",
          age: "1 hour ago",
          points: 1,
          pointsSinceLastRun: null,
          numComments: 1,
          articleWords: null,
          isNew: true,
          articleSummary: "The poster asks about indentation.",
          articleSource: "post",
          discussionSummary: null,
          discussionCitations: [],
          commentsShown: null,
          commentsTotal: null,
          articleShare: null,
          notes: ["Discussion summary failed: Ollama answered HTTP 500: boom."],
        },
      ],
      incomplete: null,
    });
    expect(text.endsWith("}\n")).toBe(true);
  });

  test("keeps control characters out of the raw text (escaped as \\u001b)", () => {
    const renderer = jsonRenderer();
    renderer.begin(meta);
    renderer.story({ ...linked, story: { ...linked.story, title: "a\u001bb" } }, 0);
    const text = renderer.end();
    expect(text).not.toContain("\u001b");
    expect(text).toContain("a\\u001bb");
  });
});

describe("htmlRenderer()", () => {
  const html = (stories: StoryDigest[]) =>
    renderAll(htmlRenderer({ timeZone: "UTC" }), stories).replace(/<style>[\s\S]*<\/style>/, "");

  test("renders a self-contained page with no scripts or external resources", () => {
    const page = renderAll(htmlRenderer({ timeZone: "UTC" }), [linked, askHn]);
    expect(page).toStartWith("<!doctype html>");
    expect(page).toEndWith("</html>\n");
    expect(page).toContain('<meta charset="utf-8">');
    expect(page).toContain("<style>");
    expect(page).not.toMatch(/<script|<link|src=|@import|url\(/i);
    expect(page).toContain('<a href="https://example.com/malloc">A faster allocator</a>');
    expect(page).toContain("<p>The allocator is faster.</p>\n<p>It uses per-thread caches.</p>");
    expect(page).toContain('<p class="missing">No summary.</p>');
    expect(page).toContain("<li>Discussion summary failed: Ollama answered HTTP 500: boom.</li>");
  });

  test("says when in words, in the header and the <title>", () => {
    const page = html([linked, askHn]);
    expect(page).toContain("<title>Hacker News digest · Sunday 3 August 2025, 18:54 UTC</title>");
    expect(page).toContain(
      "<p>Sunday 3 August 2025, 18:54 UTC · llama3.2 · 2 stories · 1 new since the last run (Saturday 2 August 2025, 18:00 UTC)</p>",
    );
    expect(page).not.toContain("2025-08-03T");
  });

  test("a previous run the same day is named by its time; none new says so", () => {
    const renderer = htmlRenderer({ timeZone: "UTC" });
    renderer.begin({ ...meta, newCount: 0, lastRunAt: "2025-08-03T07:05:00.000Z" });
    renderer.story(linked, 0);
    expect(renderer.end()).toContain(
      "<p>Sunday 3 August 2025, 18:54 UTC · llama3.2 · 2 stories · nothing new since the last run at 07:05 UTC</p>",
    );
  });

  test("opens with contents linking every story, new ones first, with reading times", () => {
    const page = html([linked, askHn]);
    const toc = page.slice(page.indexOf('<nav class="toc"'), page.indexOf("</nav>"));
    expect(toc).toBe(
      [
        '<nav class="toc" id="contents" aria-label="Contents">',
        "<h2>New since the last run</h2>",
        "<ol>",
        '<li value="2"><a href="#story-102">Ask HN: Tabs or spaces?</a> <span class="facts">Ask HN · 1 comment</span></li>',
        "</ol>",
        "<h2>Still on the front page</h2>",
        "<ol>",
        '<li value="1"><a href="#story-101">A faster allocator</a> <span class="facts">example.com · 6 min read · 230 comments</span></li>',
        "</ol>",
        "",
      ].join("\n"),
    );
    // The stories follow in the same order, numbered by their place on the front page.
    expect(page.indexOf('id="story-102"')).toBeLessThan(page.indexOf('id="story-101"'));
    expect(page).toContain('<h3><span class="rank">2.</span> Ask HN: Tabs or spaces?</h3>');
    expect(page).toContain(
      '<p class="facts"><strong class="new">New</strong> · Ask HN · 1 hour ago · 1 point · 1 comment',
    );
    expect(page).toContain("Article · example.com · 6 min read · 3 hours ago · by ada");
  });

  test("without a previous run, one group in front-page order and no New marks", () => {
    const first = { ...meta, newCount: null, lastRunAt: null };
    const renderer = htmlRenderer({ timeZone: "UTC" });
    renderer.begin(first);
    renderer.story({ ...linked, isNew: null, pointsSinceLastRun: null }, 0);
    renderer.story({ ...askHn, isNew: null }, 1);
    const fresh = renderer.end();
    expect(fresh).toContain("<h2>Front page</h2>");
    expect(fresh).not.toContain("New since");
    expect(fresh).not.toContain('class="new"');
    expect(fresh.indexOf('id="story-101"')).toBeLessThan(fresh.indexOf('id="story-102"'));
  });

  test("escapes titles, summaries, notes and URLs", () => {
    const hostile: StoryDigest = {
      ...linked,
      story: {
        ...linked.story,
        title: '<script>alert("t")</script>',
        url: 'https://example.com/"><script>x</script>',
        author: "<b>me</b>",
      },
      articleSummary: "<img src=x onerror=alert(1)> & more",
      discussionSummary: "</p><iframe>",
      notes: ["<svg onload=alert(2)>"],
    };
    const page = html([hostile]);
    expect(page).not.toContain("<script");
    expect(page).not.toContain("<img");
    expect(page).not.toContain("<iframe");
    expect(page).not.toContain("<svg");
    expect(page).not.toContain("<b>");
    expect(page).toContain("&#60;script&#62;alert(&#34;t&#34;)&#60;/script&#62;");
    expect(page).toContain(
      'href="https://example.com/&#34;&#62;&#60;script&#62;x&#60;/script&#62;"',
    );
  });

  test("never links a URL that is not http(s)", () => {
    const page = html([{ ...linked, story: { ...linked.story, url: "javascript:alert(1)" } }]);
    expect(page).not.toContain('javascript:alert(1)"');
    expect(page).toContain('<h3><span class="rank">1.</span> A faster allocator</h3>');
  });

  test("escapeHtml() escapes the five special characters and drops control characters", () => {
    expect(escapeHtml(`<a href='x'>"&"</a>\u001b`)).toBe(
      "&#60;a href=&#39;x&#39;&#62;&#34;&#38;&#34;&#60;/a&#62;",
    );
  });
});
