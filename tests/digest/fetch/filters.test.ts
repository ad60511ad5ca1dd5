import { describe, expect, test } from "bun:test";
import {
  applyFilters,
  hitsWanted,
  leftOutBecause,
  NO_FILTER,
  parseFilterList,
  type StoryFilter,
} from "../../../lib/digest/fetch/filters.ts";
import type { Story } from "../../../lib/digest/types.ts";

function story(overrides: Partial<Story> = {}): Story {
  return {
    id: 1,
    title: "A story",
    url: "https://example.org/a",
    storyText: null,
    author: "pg",
    points: 100,
    numComments: 10,
    type: "article",
    site: "example.org",
    createdAt: null,
    ...overrides,
  };
}

const filter = (overrides: Partial<StoryFilter>): StoryFilter => ({ ...NO_FILTER, ...overrides });

describe("parseFilterList()", () => {
  test("splits on commas, trims, lowercases and tells words from hosts by the dot", () => {
    const entries = parseFilterList(" Rust ,, www.Example.com,machine  learning ");
    expect(entries.map(({ kind, text }) => ({ kind, text }))).toEqual([
      { kind: "word", text: "rust" },
      { kind: "host", text: "example.com" },
      { kind: "word", text: "machine learning" },
    ]);
  });

  test("refuses an empty list and a host that is no host name, naming the entry", () => {
    expect(() => parseFilterList(" , ")).toThrow(
      "expected a comma-separated list of words or hosts",
    );
    expect(() => parseFilterList("rust,exa mple.com")).toThrow(
      'entry "exa mple.com": expected a host name such as example.com',
    );
    expect(() => parseFilterList("a..b")).toThrow('entry "a..b"');
  });
});

describe("leftOutBecause()", () => {
  test("a word matches the title as a whole word, in any case", () => {
    const skip = parseFilterList("go,ai");
    expect(leftOutBecause(story({ title: "Why GO is fast" }), filter({ skip }))).toBe(
      "matching --skip go",
    );
    expect(leftOutBecause(story({ title: "Go: a tour" }), filter({ skip }))).toBe(
      "matching --skip go",
    );
    expect(leftOutBecause(story({ title: "Google ships Gopher" }), filter({ skip }))).toBeNull();
    expect(leftOutBecause(story({ title: "Said the ai_agent" }), filter({ skip }))).toBeNull();
    expect(leftOutBecause(story({ title: "Maintainers burn out" }), filter({ skip }))).toBeNull();
  });

  test("a word matches its plural and possessive in any case, never inside another word", () => {
    const only = parseFilterList("llm,policy,open source");
    const at = (title: string) => leftOutBecause(story({ title }), filter({ only }));
    for (const title of [
      "LLMs are not databases",
      "What an LLM's context window holds",
      "Running llm locally",
      "New policies for maintainers",
      "Open-source tools",
      "Two open sources",
    ]) {
      expect(at(title)).toBeNull();
    }
    for (const title of ["A fullm stack", "LLMish tools", "Policymakers meet", "Sourcehut"]) {
      expect(at(title)).toBe("matching no --only entry");
    }
  });

  test("a host matches the link's host and its subdomains, not a look-alike", () => {
    const skip = parseFilterList("example.com");
    const at = (url: string | null) => leftOutBecause(story({ url }), filter({ skip }));
    expect(at("https://example.com/x")).toBe("matching --skip example.com");
    expect(at("https://blog.EXAMPLE.com/x")).toBe("matching --skip example.com");
    expect(at("https://www.example.com/x")).toBe("matching --skip example.com");
    expect(at("https://notexample.com/x")).toBeNull();
    expect(at("https://example.com.evil.net/x")).toBeNull();
    expect(at(null)).toBeNull();
  });

  test("--only keeps a story matching an entry; points and comments are floors", () => {
    const only = parseFilterList("rust,github.com");
    expect(leftOutBecause(story({ title: "Rust 2.0" }), filter({ only }))).toBeNull();
    expect(leftOutBecause(story({ url: "https://github.com/a/b" }), filter({ only }))).toBeNull();
    expect(leftOutBecause(story({ title: "Zig 1.0" }), filter({ only }))).toBe(
      "matching no --only entry",
    );
    expect(leftOutBecause(story({ points: 49 }), filter({ minPoints: 50 }))).toBe(
      "under 50 points",
    );
    expect(leftOutBecause(story({ points: 50 }), filter({ minPoints: 50 }))).toBeNull();
    expect(leftOutBecause(story({ numComments: 4 }), filter({ minComments: 5 }))).toBe(
      "under 5 comments",
    );
  });
});

describe("applyFilters() and hitsWanted()", () => {
  test("without filters: the front page's first --limit, no line, and --limit hits asked for", () => {
    const stories = [1, 2, 3].map((id) => story({ id }));
    expect(applyFilters(stories, NO_FILTER, 2)).toEqual({
      stories: stories.slice(0, 2),
      line: null,
    });
    expect(hitsWanted(10, NO_FILTER)).toBe(10);
  });

  test("with filters: three times --limit asked for (1000 at most), kept in order, trimmed", () => {
    const minPoints = filter({ minPoints: 50 });
    expect(hitsWanted(10, minPoints)).toBe(30);
    expect(hitsWanted(500, minPoints)).toBe(1000);
    const stories = [
      story({ id: 1, points: 10 }),
      story({ id: 2 }),
      story({ id: 3, title: "Crypto winter" }),
      story({ id: 4 }),
      story({ id: 5, points: 5 }),
      story({ id: 6 }),
    ];
    const result = applyFilters(
      stories,
      filter({ minPoints: 50, skip: parseFilterList("crypto") }),
      2,
    );
    expect(result.stories.map((s) => s.id)).toEqual([2, 4]);
    // Only the stories looked at before --limit was filled are counted.
    expect(result.line).toBe(
      "Left out 2 of 4 front-page stories: 1 under 50 points, 1 matching --skip crypto",
    );
  });

  test("says when fewer stories remain than --limit asked for", () => {
    const result = applyFilters(
      [story({ id: 1, points: 1 }), story({ id: 2 })],
      filter({ minPoints: 2 }),
      5,
    );
    expect(result.line).toBe(
      "Left out 1 of 2 front-page stories: 1 under 2 points; 1 of the 5 asked for remain",
    );
  });
});
