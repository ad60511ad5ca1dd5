import { describe, expect, test } from "bun:test";
import { buildThread } from "../../../lib/digest/fetch/thread.ts";
import {
  citationsAsHtml,
  citationsAsMarkdown,
  citationsAsNumbers,
  citationsFromNumbers,
} from "../../../lib/digest/render/citations.ts";
import {
  citeMarker,
  resolveCitations,
  withoutCitations,
} from "../../../lib/digest/summarise/citations.ts";
import type { Comment } from "../../../lib/digest/types.ts";

const STORY = 1;

function comment(id: number, parentId: number, text: string): Comment {
  return {
    id,
    parentId,
    author: `u${id}`,
    text,
    createdAt: id,
    url: `https://news.ycombinator.com/item?id=${id}`,
  };
}

const comments = [
  comment(10, STORY, "Per-thread caches are why it's faster; the rest is noise."),
  comment(11, 10, "Not on NUMA machines, where the caches fight."),
  comment(20, STORY, "Jemalloc did this first, in 2006."),
];
const thread = buildThread(comments, STORY);
const shown = new Map([
  ["c1", comments[0] as Comment],
  ["c2", comments[1] as Comment],
]);
const page = (id: number) => citeMarker(`https://news.ycombinator.com/item?id=${id}`);

/** resolveCitations() of a summary `text`, against the shown comments c1 and c2 of the thread. */
function resolved(text: string) {
  return resolveCitations(text, shown, thread);
}

describe("resolveCitations()", () => {
  test("turns the ids a point cites into the comments' pages; ids it was not shown go", () => {
    const result = resolved(
      "- Caches make it faster [c1].\n- Not everywhere [c2, c1] (c9).\n- Unknown [c7].",
    );
    expect(result.summary).toBe(
      `- Caches make it faster ${page(10)}.\n- Not everywhere ${page(11)}${page(10)}.\n- Unknown.`,
    );
    expect(result.notes).toEqual([]);
  });

  test("keeps a quotation found word for word in the comment it cites, whatever the case and apostrophes", () => {
    const result = resolved(
      'One says caches are “why it’s FASTER” [c1], another "not on NUMA machines" [c2].',
    );
    expect(result.quotesFound).toBe(2);
    expect(result.quotesMarked).toBe(0);
    expect(result.summary).toContain("“why it’s FASTER”");
    expect(result.summary).toContain('"not on NUMA machines"');
  });

  test("never shows an invented quotation as a quote: its marks go and it is marked", () => {
    const result = resolved('One commenter calls it "a total game changer" [c1].');
    expect(result.summary).toBe(
      `One commenter calls it a total game changer (unverified) ${page(10)}.`,
    );
    expect(result.quotesMarked).toBe(1);
    expect(result.notes).toEqual([
      "A quotation in the discussion summary could not be found word for word in the comments it cites; it is shown without quotation marks, marked (unverified).",
    ]);
  });

  test("a quotation found in the thread but not in the comment it cites is marked", () => {
    const result = resolved('Someone notes "Jemalloc did this first" [c1].');
    expect(result.quotesMarked).toBe(1);
    expect(result.summary).not.toContain('"');
  });

  test("a quotation citing nothing is looked for in the whole thread, and cited to its comment", () => {
    const found = resolved('History: "Jemalloc did this first, in 2006."');
    expect(found.summary).toBe(`History: "Jemalloc did this first, in 2006." ${page(20)}`);
    const invented = resolved('History: "tcmalloc came first"');
    expect(invented.summary).toBe("History: tcmalloc came first (unverified)");
  });

  test("an invented blockquote is no quote either", () => {
    const result = resolved("> The allocator is a marvel.\n\nMost agree [c1].");
    expect(result.summary).toStartWith("The allocator is a marvel. (unverified)\n");
    const real = resolved("> Not on NUMA machines [c2]");
    expect(real.summary).toBe(`> Not on NUMA machines ${page(11)}`);
  });

  test("the model's own markers are never links", () => {
    const result = resolved("See ⟦https://evil.example/⟧ here [c1].");
    expect(result.summary).toBe(`See https://evil.example/ here ${page(10)}.`);
  });

  test("withoutCitations() gives the text the model reads again", () => {
    expect(withoutCitations(`Faster ${page(10)}${page(11)}. Slower ${page(20)}.`)).toBe(
      "Faster. Slower.",
    );
  });
});

describe("citations in the outputs", () => {
  const summary = `Faster ${page(10)}, but not on NUMA ${page(11)}${page(10)}.`;

  test("Markdown numbers each cited comment once, in the order first cited", () => {
    expect(citationsAsMarkdown(summary)).toBe(
      "Faster [[1]](https://news.ycombinator.com/item?id=10), but not on NUMA [[2]](https://news.ycombinator.com/item?id=11)[[1]](https://news.ycombinator.com/item?id=10).",
    );
  });

  test("HTML links each to the comment, escaped", () => {
    const html = citationsAsHtml(
      `<p>Faster ${citeMarker("https://lobste.rs/c/abc?x=1&amp;y=2")}</p>`,
    );
    expect(html).toBe(
      '<p>Faster <sup class="cite"><a href="https://lobste.rs/c/abc?x=1&#38;y=2">[1]</a></sup></p>',
    );
  });

  test("JSON numbers them and lists the pages; an archived day reads them back as they were", () => {
    const json = citationsAsNumbers(summary);
    expect(json).toEqual({
      text: "Faster [1], but not on NUMA [2][1].",
      pages: ["https://news.ycombinator.com/item?id=10", "https://news.ycombinator.com/item?id=11"],
    });
    expect(citationsFromNumbers(json.text, json.pages)).toBe(summary);
  });
});
