import { describe, expect, test } from "bun:test";
import { markdownRenderer } from "../../../lib/digest/render/markdown.ts";
import type { StoryDigest } from "../../../lib/digest/types.ts";
import { allocatorDigest } from "../../fakes/story-digest.ts";
import { htmlText, viewMarkdown, viewNotes } from "./markdown-view.ts";

const base = allocatorDigest({ story: { createdAt: null } });

function story(digest: Partial<StoryDigest>): string {
  return markdownRenderer().story({ ...base, ...digest }, 0);
}

/** The notes list as a viewer shows it when every note is plain text: one `<li>` each. */
function literalList(texts: string[]): string {
  return `<ul>\n${texts.map((text) => `<li>${htmlText(text)}</li>`).join("\n")}\n</ul>\n`;
}

describe("markdownRenderer() notes", () => {
  // Each note quotes text from the network; each must show exactly as written (on one line).
  const hostile = [
    "No article summary: it redirects to https://evil.example/[click](javascript:alert(1)), which was not followed.",
    "<img src=x onerror=alert(1)> <script>alert(2)</script> <https://evil.example>",
    "![pixel](https://tracker.example/p.png) [ref]: javascript:alert(3)",
    "`code` and ``more`` and ``` fence",
    "*em* _em_ **strong** __strong__ ~~strike~~ ~tilde~",
    "| a | b | c |",
    "set DIGEST_ALLOWED_HOSTS=snake_case_host:8080 to allow _this_ or this_ or _that",
    "&amp; &lt;b&gt; &#60;i&#62; AT&T",
    "a backslash at the end \\",
    "# not a heading",
    "- not a nested list",
    "+ nor this",
    "1. nor an ordered one",
    "2) nor this",
    "> not a quote",
    "---",
    "===",
    "[ ] not a task",
  ];

  test("shows hostile note text as literal text, never as HTML, links, emphasis or blocks", () => {
    expect(viewNotes(story({ notes: hostile }))).toBe(literalList(hostile));
  });

  test("keeps a note on its own line: a line break cannot start a heading, list, quote, fence or table", () => {
    const note = [
      "Summary failed: model said",
      "# heading",
      "",
      "- item",
      "> quote",
      "```",
      "| a | b |",
      "|---|---|",
      "| c | d |",
      "  trailing spaces  ",
      "next",
    ].join("\n");
    const oneLine =
      "Summary failed: model said # heading - item > quote ``` | a | b | |---|---| | c | d | trailing spaces next";
    expect(viewNotes(story({ notes: [note, "after"] }))).toBe(literalList([oneLine, "after"]));
  });

  test("still strips control characters from notes", () => {
    const out = story({
      notes: [
        "Failed: \u001b[31mred\u001b[0m \u001b]8;;https://evil.example/\u0007link\u001b]8;;\u0007",
      ],
    });
    for (const control of ["\u001b", "\u0007"]) expect(out).not.toContain(control);
    expect(viewNotes(out)).toBe(literalList(["Failed: red link"]));
  });
});

describe("markdownRenderer() titles, sites and authors", () => {
  test("show as literal text, with strikethrough and entities escaped too", () => {
    const title = "~~Old~~ news &amp; *new* <b>[x](javascript:y)</b> `z`";
    const html = viewMarkdown(
      story({
        story: { ...base.story, title, site: "~~site~~.example", author: "&lt;ada&gt;" },
      }),
    );
    expect(html).toContain(
      `<h2>1. <a href="https://example.com/malloc">${htmlText(title)}</a></h2>`,
    );
    expect(html).toContain(
      `<p>Article · ${htmlText("~~site~~.example")} · by ${htmlText("&lt;ada&gt;")} · `,
    );
  });

  test("never links a title to a URL that is not http(s)", () => {
    const html = viewMarkdown(
      story({ story: { ...base.story, url: "javascript:alert(1)", title: "Click me" } }),
    );
    expect(html).toContain("<h2>1. Click me</h2>");
    expect(html).not.toContain("javascript:");
  });
});
