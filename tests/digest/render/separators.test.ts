/**
 * U+2028 and U+2029 (which end a line in a script that reads the output) and U+FEFF (an
 * invisible byte-order mark), from a title, a site or a model's summary, leave every format
 * escaped, and read back as the same text.
 */
import { describe, expect, test } from "bun:test";
import { parseFeed } from "@rowanmanning/feed-parser";
import type { Format } from "../../../lib/digest/config.ts";
import { atomFeed } from "../../../lib/digest/render/feed.ts";
import { createRenderer } from "../../../lib/digest/render/renderer.ts";
import type { StoryDigest } from "../../../lib/digest/types.ts";
import { PAGE_META, sampleDigests } from "../../fakes/digest-page.ts";

const RAW = /[\u2028\u2029\uFEFF]/;
const TITLE = "Line\u2028and paragraph\u2029separators, and a \uFEFFBOM";

function hostile(): StoryDigest {
  const [first] = sampleDigests();
  if (!first) throw new Error("no sample");
  return {
    ...first,
    story: { ...first.story, title: TITLE, site: "exa\uFEFFmple.com" },
    articleSummary: "It says\u2028this, and\u2029that.\uFEFF",
    discussionSummary: "Commenters\u2028agree.",
  };
}

function render(format: Format): string {
  const renderer = createRenderer(format, { timeZone: "UTC" });
  return [renderer.begin(PAGE_META), renderer.story(hostile(), 0), renderer.end()].join("");
}

describe("U+2028, U+2029 and U+FEFF", () => {
  test("are \\u escapes in the JSON, which reads back as the same text", () => {
    const json = render("json");
    expect(json).not.toMatch(RAW);
    expect(json).toContain("Line\\u2028and paragraph\\u2029separators, and a \\ufeffBOM");
    const parsed = JSON.parse(json) as { stories: { title: string }[] };
    expect(parsed.stories[0]?.title).toBe(TITLE);
  });

  test("are character references in the HTML page", () => {
    const html = render("html");
    expect(html).not.toMatch(RAW);
    expect(html).toContain("Line&#8232;and paragraph&#8233;separators, and a &#65279;BOM");
    expect(html).toContain("It says&#8232;this, and&#8233;that.");
  });

  test("are character references in the Atom feed, which a parser reads back", () => {
    const digest = hostile();
    const feed = atomFeed(
      [
        {
          key: "2026-11-25",
          generatedAt: PAGE_META.generatedAt,
          model: "llama3.2",
          stories: [
            {
              id: digest.story.id,
              title: digest.story.title,
              url: digest.story.url,
              site: digest.story.site,
              points: digest.story.points,
              numComments: digest.story.numComments,
              articleWords: 900,
              articleSummary: digest.articleSummary,
              articleSource: "article",
              discussionSummary: digest.discussionSummary,
            },
          ],
        },
      ],
      { id: "urn:uuid:00000000-0000-5000-a000-000000000000" },
    );
    expect(feed).not.toMatch(RAW);
    const item = parseFeed(feed).items[0];
    // A title is one line: separators are spaces there.
    expect(item?.title).toBe("Line and paragraph separators, and a BOM");
    // The summaries are HTML, carrying them as references.
    expect(item?.content).toContain("It says&#8232;this, and&#8233;that.&#65279;");
  });
});
