import { describe, expect, test } from "bun:test";
import { htmlToText } from "../../../lib/digest/fetch/html-text.ts";

describe("htmlToText()", () => {
  test("decodes the entities HN uses", () => {
    expect(htmlToText("It&#x27;s &quot;fine&quot; &amp; 2 &gt; 1 &lt; 3, see a&#x2F;b")).toBe(
      `It's "fine" & 2 > 1 < 3, see a/b`,
    );
  });

  test("turns unclosed <p> separators into paragraphs", () => {
    expect(htmlToText("First paragraph.<p>Second one.<p>Third.")).toBe(
      "First paragraph.\n\nSecond one.\n\nThird.",
    );
  });

  test("keeps inline markup as its text and collapses whitespace", () => {
    expect(htmlToText("This is <i>really</i>\n  <b>important</b>.")).toBe(
      "This is really important.",
    );
  });

  test("uses the href of a link whose text HN cut with ...", () => {
    const html =
      'See <a href="https:&#x2F;&#x2F;example.com&#x2F;a&#x2F;very&#x2F;long&#x2F;path?x=1" rel="nofollow">https:&#x2F;&#x2F;example.com&#x2F;a&#x2F;ve...</a> for more';
    expect(htmlToText(html)).toBe("See https://example.com/a/very/long/path?x=1 for more");
  });

  test("keeps a link's words and adds its address", () => {
    expect(htmlToText('Read <a href="https://example.com/post">the post</a>.')).toBe(
      "Read the post (https://example.com/post).",
    );
  });

  test("never turns a javascript: link into text that looks like a URL", () => {
    expect(htmlToText('<a href="javascript:alert(1)">click</a>')).toBe("click");
  });

  test("keeps <pre><code> verbatim in a fenced block", () => {
    const html = "Try this:<p><pre><code>  if a &lt; b {\n      return;\n  }\n</code></pre>Works.";
    expect(htmlToText(html)).toBe(
      "Try this:\n\n```\n  if a < b {\n      return;\n  }\n```\n\nWorks.",
    );
  });

  test("handles nesting: lists, quotes and paragraphs inside blocks", () => {
    const html =
      "<div><p>Intro</p><ul><li>one <i>item</i></li><li>two</li></ul><blockquote><p>quoted</p></blockquote></div>";
    expect(htmlToText(html)).toBe("Intro\n\n- one item\n- two\n\nquoted");
  });

  test("drops scripts and styles", () => {
    expect(htmlToText("<style>p{}</style>Text<script>alert(1)</script>")).toBe("Text");
  });

  test("removes terminal control characters", () => {
    expect(htmlToText("bad\u001b[2J\u0007 news\u202e")).toBe("bad news");
  });

  test("returns an empty string for empty or whitespace-only HTML", () => {
    expect(htmlToText("")).toBe("");
    expect(htmlToText("<p> </p>")).toBe("");
  });
});

describe("htmlToText() with linkUrls off (articles)", () => {
  test("keeps a link's words and drops its address", () => {
    const html =
      'Read <a href="https://example.com/post?utm_source=x">the post</a> and <a href="/docs"><b>the docs</b></a>.';
    expect(htmlToText(html, { linkUrls: false })).toBe("Read the post and the docs.");
  });

  test("keeps a link whose words are an address, as the page shows it", () => {
    expect(
      htmlToText('<a href="https://github.com/a/b">github.com/a/b</a>', { linkUrls: false }),
    ).toBe("github.com/a/b");
  });
});
