import { describe, expect, test } from "bun:test";
import { marked } from "marked";
import {
  modelTextToHtml,
  modelTextToMarkdown,
  startsWithBlock,
} from "../../../lib/digest/render/model-markdown.ts";
import { viewMarkdown } from "./markdown-view.ts";

const HOSTILE = [
  "The **allocator** is *fast* and uses `malloc<T>`.",
  "",
  "* per-thread caches",
  "* fewer locks",
  "",
  "## Why it matters",
  "",
  '<script>alert(1)</script> <img src=x onerror="alert(2)"> [click](javascript:alert(3)) ![pixel](https://tracker.example/p.png)',
].join("\n");

describe("modelTextToHtml()", () => {
  test("renders bold, italics, lists and inline code, and escapes raw HTML", () => {
    expect(modelTextToHtml(HOSTILE)).toBe(
      [
        "<p>The <strong>allocator</strong> is <em>fast</em> and uses <code>malloc&lt;T&gt;</code>.</p>",
        "<ul>",
        "<li>per-thread caches</li>",
        "<li>fewer locks</li>",
        "</ul>",
        "<h4>Why it matters</h4>",
        "<p>&lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x onerror=&quot;alert(2)&quot;&gt; [click](javascript:alert(3)) ![pixel](https://tracker.example/p.png)</p>",
      ].join("\n"),
    );
  });

  test("keeps line breaks inside a paragraph and removes escape sequences", () => {
    expect(modelTextToHtml("one\ntwo \u001b]8;;https://x\u001b\\link\u001b]8;;\u001b\\")).toBe(
      "<p>one<br>\ntwo link</p>",
    );
  });
});

describe("modelTextToMarkdown()", () => {
  test("escapes raw HTML, defuses images and non-web links, demotes headings", () => {
    expect(modelTextToMarkdown(HOSTILE)).toBe(
      [
        "The **allocator** is *fast* and uses `malloc<T>`.",
        "",
        "* per-thread caches",
        "* fewer locks",
        "",
        "#### Why it matters",
        "",
        '&lt;script>alert(1)&lt;/script> &lt;img src=x onerror="alert(2)"> [click]\\(javascript:alert(3)) !\\[pixel](https://tracker.example/p.png)',
      ].join("\n"),
    );
  });

  test("defuses reference-style link definitions that do not point at the web", () => {
    expect(
      modelTextToMarkdown("See [this][1].\n\n[1]: javascript:alert(1)\n[2]: https://ok.example/"),
    ).toBe("See [this][1].\n\n\\[1]: javascript:alert(1)\n[2]: https://ok.example/");
  });

  test.each([
    ["a quote", "> [x]: javascript:alert(1)"],
    ["a list item", "- [x]: javascript:alert(1)"],
    ["a nested quote", "> > [x]: javascript:alert(1)"],
    ["a list in a quote in a list", "1. > - [x]: javascript:alert(1)"],
    ["a list item's continuation", "- item\n\n  [x]: javascript:alert(1)"],
    ["a quote with its target on the next line", ">[x]:\n> javascript:alert(1)"],
    ["a label over two lines", "[a\nx]: javascript:alert(1)"],
  ])(
    "defuses a non-web reference definition in %s, as a viewer keeping every link sees it",
    (_where, definition) => {
      const text = `See [x] and [a x].\n\n${definition}`;
      const html = viewMarkdown(modelTextToMarkdown(text));
      // Without the defusing the viewer links the reference: <a href="javascript:alert(1)">.
      expect(viewMarkdown(text)).toContain('href="javascript:alert(1)"');
      expect(html).not.toContain("href=");
    },
  );

  // marked has no 999-character limit on a label, and finds definitions before code spans.
  const LONG_LABEL = `a \`code\` span and ${"x".repeat(1000)}`;
  test.each([
    ["on its line", `[${LONG_LABEL}]: javascript:alert(1)`],
    ["in a list in a quote", `> - [${LONG_LABEL}]: javascript:alert(1)`],
    ["over two lines", `[${LONG_LABEL}\nmore]: javascript:alert(1)`],
  ])(
    "defuses a definition whose label is over 999 characters and holds a code span, %s, for marked too",
    (_where, definition) => {
      const label = LONG_LABEL + (definition.includes("\nmore") ? "\nmore" : "");
      const text = `See [${label}].\n\n${definition}`;
      // Without the defusing marked links it: <a href="javascript:alert(1)">.
      expect(marked.parse(text, { async: false })).toContain('href="javascript:alert(1)"');
      const safe = modelTextToMarkdown(text);
      expect(marked.parse(safe, { async: false })).not.toContain("href=");
      expect(viewMarkdown(safe)).not.toContain("href=");
    },
  );

  test("keeps line-opening brackets readable and web links working", () => {
    const safe = modelTextToMarkdown("[1] First point\n[site](https://ok.example/) is up");
    expect(safe).toBe("\\[1] First point\n[site](https://ok.example/) is up");
    const html = marked.parse(safe, { async: false });
    expect(html).toContain("[1] First point");
    expect(html).toContain('<a href="https://ok.example/">site</a>');
  });

  test("keeps a web reference definition in a quote working", () => {
    const html = viewMarkdown(modelTextToMarkdown("See [ok].\n\n> [ok]: https://ok.example/"));
    expect(html).toContain('<a href="https://ok.example/">ok</a>');
  });

  test("turns setext and top-level headings into level 3 or lower", () => {
    expect(modelTextToMarkdown("# Big\nTitle\n===\nSub\n---\ntext")).toBe(
      "### Big\n### Title\n#### Sub\ntext",
    );
  });

  test("leaves code alone and closes a fence the model left open", () => {
    expect(modelTextToMarkdown("```html\n<b>x</b>\n```\n`<i>`")).toBe(
      "```html\n<b>x</b>\n```\n`<i>`",
    );
    expect(modelTextToMarkdown("Code:\n```\nrm -rf <dir>")).toBe("Code:\n```\nrm -rf <dir>\n```");
  });

  test("startsWithBlock() tells a text a label cannot lead", () => {
    expect(startsWithBlock("- item")).toBe(true);
    expect(startsWithBlock("#### Heading")).toBe(true);
    expect(startsWithBlock("Plain text.")).toBe(false);
  });
});
