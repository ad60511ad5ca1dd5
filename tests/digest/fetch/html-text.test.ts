import { describe, expect, test } from "bun:test";
import { htmlToText } from "../../../lib/digest/fetch/html-text.ts";

describe("htmlToText()", () => {
  test.each([
    [
      "decodes the entities HN uses",
      "It&#x27;s &quot;fine&quot; &amp; 2 &gt; 1 &lt; 3, see a&#x2F;b",
      `It's "fine" & 2 > 1 < 3, see a/b`,
    ],
    [
      "turns unclosed <p> separators into paragraphs",
      "First paragraph.<p>Second one.<p>Third.",
      "First paragraph.\n\nSecond one.\n\nThird.",
    ],
    [
      "keeps inline markup as its text and collapses whitespace",
      "This is <i>really</i>\n  <b>important</b>.",
      "This is really important.",
    ],
    [
      "uses the href of a link whose text HN cut with ...",
      'See <a href="https:&#x2F;&#x2F;example.com&#x2F;a&#x2F;very&#x2F;long&#x2F;path?x=1" rel="nofollow">https:&#x2F;&#x2F;example.com&#x2F;a&#x2F;ve...</a> for more',
      "See https://example.com/a/very/long/path?x=1 for more",
    ],
    [
      "keeps a link's words and adds its address",
      'Read <a href="https://example.com/post">the post</a>.',
      "Read the post (https://example.com/post).",
    ],
    [
      "never turns a javascript: link into text that looks like a URL",
      '<a href="javascript:alert(1)">click</a>',
      "click",
    ],
    [
      "keeps <pre><code> verbatim in a fenced block",
      "Try this:<p><pre><code>  if a &lt; b {\n      return;\n  }\n</code></pre>Works.",
      "Try this:\n\n```\n  if a < b {\n      return;\n  }\n```\n\nWorks.",
    ],
    [
      "handles nesting: lists, quotes and paragraphs inside blocks",
      "<div><p>Intro</p><ul><li>one <i>item</i></li><li>two</li></ul><blockquote><p>quoted</p></blockquote></div>",
      "Intro\n\n- one item\n- two\n\nquoted",
    ],
    ["drops scripts and styles", "<style>p{}</style>Text<script>alert(1)</script>", "Text"],
    ["removes terminal control characters", "bad\u001b[2J\u0007 news\u202e", "bad news"],
    ["returns an empty string for empty HTML", "", ""],
    ["returns an empty string for whitespace-only HTML", "<p> </p>", ""],
  ])("%s", (_, html, text) => {
    expect(htmlToText(html)).toBe(text);
  });
});

describe("htmlToText() with linkUrls off (articles)", () => {
  test.each([
    [
      "keeps a link's words and drops its address",
      'Read <a href="https://example.com/post?utm_source=x">the post</a> and <a href="/docs"><b>the docs</b></a>.',
      "Read the post and the docs.",
    ],
    [
      "keeps a link whose words are an address, as the page shows it",
      '<a href="https://github.com/a/b">github.com/a/b</a>',
      "github.com/a/b",
    ],
  ])("%s", (_, html, text) => {
    expect(htmlToText(html, { linkUrls: false })).toBe(text);
  });
});
