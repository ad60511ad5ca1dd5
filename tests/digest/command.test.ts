import { describe, expect, test } from "bun:test";
import { EventEmitter } from "node:events";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCommand } from "citty";
import { renderHelp } from "../../lib/cli/help.ts";
import { exitCodeFor } from "../../lib/cli/run.ts";
import { ConfigError, UsageError } from "../../lib/config/errors.ts";
import { createDigestCommand } from "../../lib/digest/command.ts";
import { FIELDS } from "../../lib/digest/config.ts";
import { DigestFailedError, summaryCounts } from "../../lib/digest/digest.ts";
import { SearchApiError } from "../../lib/digest/fetch/search-fetch.ts";
import { PreflightError } from "../../lib/digest/summarise/models/model-client.ts";
import { createMemoryLogger } from "../../lib/log.ts";
import { articleHtml, articleParagraphs } from "../fakes/article-site.ts";
import { endlessResponse, gate, startDigestWorld } from "../fakes/digest-world.ts";
import { askHnHit, commentHit, storyHit, textPost } from "../fakes/hn-search.ts";
import { echoTitle, promptKind } from "../fakes/ollama.ts";
import { tempDirs } from "../fakes/temp-dirs.ts";
import { htmlText, viewNotes } from "./render/markdown-view.ts";

const tempDir = tempDirs("digest-cmd-");

const BODY = articleParagraphs();

function twoStories() {
  const first = storyHit({
    title: "Show HN: A tiny database",
    url: "/db",
    points: 300,
    num_comments: 2,
  });
  const ask = askHnHit();
  const firstId = Number(first.objectID);
  const top = commentHit(firstId, { comment_text: "Nice work &amp; clean code." });
  return {
    stories: [first, ask],
    pages: { "/db": { body: articleHtml("A tiny database", BODY) } },
    comments: {
      [firstId]: [
        top,
        commentHit(firstId, { parent_id: Number(top.objectID), comment_text: "Agreed." }),
      ],
      [Number(ask.objectID)]: [commentHit(Number(ask.objectID), { comment_text: "SICP, again." })],
    },
  };
}

/** Runs `bun run digest <rawArgs>` in-process, through citty, with everything captured. */
async function digest(
  world: { env: Record<string, string> } | undefined,
  rawArgs: string[] = [],
  options: {
    env?: Record<string, string>;
    stderrTTY?: boolean;
    fetch?: typeof fetch;
    onWrite?: (text: string) => void;
    signals?: EventEmitter;
    /** Everything written to stdout and stderr, in order, as one terminal shows it. */
    terminal?: string[];
  } = {},
) {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const logger = createMemoryLogger();
  const env = { XDG_CACHE_HOME: tempDir(), ...world?.env, ...options.env };
  let error: unknown;
  let interrupted = false;
  try {
    await runCommand(
      createDigestCommand({
        env,
        fetch: options.fetch,
        stdout: {
          write: (text: string) => {
            stdout.push(text);
            options.terminal?.push(text);
            options.onWrite?.(text);
          },
        },
        stderr: {
          isTTY: options.stderrTTY ?? false,
          columns: 120,
          write: (t) => {
            stderr.push(t);
            options.terminal?.push(t);
          },
        },
        logger,
        sleep: async () => {},
        now: () => Date.parse("2025-08-03T18:54:41Z"),
        timeZone: "UTC",
        signals: { source: options.signals ?? new EventEmitter() },
        onInterrupted: () => {
          interrupted = true;
        },
      }),
      { rawArgs },
    );
  } catch (caught) {
    error = caught;
  }
  return {
    stdout: stdout.join(""),
    chunks: stdout,
    stderr: stderr.join(""),
    logger,
    error,
    env,
    interrupted,
  };
}

/** The lines a terminal shows after these writes: `\r` goes to the line start, ESC [K clears to its end. */
function screen(writes: readonly string[]): string[] {
  const lines = [""];
  let column = 0;
  const text = writes.join("");
  for (let i = 0; i < text.length; i++) {
    const last = lines.length - 1;
    const line = lines[last] ?? "";
    if (text.startsWith("\u001b[K", i)) {
      lines[last] = line.slice(0, column);
      i += 2;
    } else if (text[i] === "\r") {
      column = 0;
    } else if (text[i] === "\n") {
      lines.push("");
      column = 0;
    } else {
      lines[last] = line.slice(0, column) + text[i] + line.slice(column + 1);
      column++;
    }
  }
  return lines;
}

describe("bun run digest", () => {
  test("prints the Markdown digest on stdout and logs only on stderr", async () => {
    const news = twoStories();
    using world = startDigestWorld(news);
    const { stdout, error, logger } = await digest(world);
    expect(error).toBeUndefined();
    const [first, ask] = news.stories;
    expect(stdout).toBe(
      [
        "# Hacker News digest",
        "",
        "Sunday 3 August 2025, 18:54 UTC · llama3.2 · 2 stories",
        "",
        `## 1. [Show HN: A tiny database](${world.site.url}/db)`,
        "",
        `Show HN · 127.0.0.1 · 1 min read · 0 minutes ago · by pg · 300 points · 2 comments · [HN discussion](https://news.ycombinator.com/item?id=${first?.objectID})`,
        "",
        "**Article.** Summary of the article of Show HN: A tiny database.",
        "",
        "**Discussion.** Summary of the discussion of Show HN: A tiny database.",
        "",
        "## 2. Ask HN: What are you reading?",
        "",
        `Ask HN · 0 minutes ago · by pg · 42 points · 1 comment · [HN discussion](https://news.ycombinator.com/item?id=${ask?.objectID})`,
        "",
        "**Post.** Summary of the article of Ask HN: What are you reading?.",
        "",
        "**Discussion.** Summary of the discussion of Ask HN: What are you reading?.",
        "",
      ].join("\n"),
    );
    expect(logger.lines.at(-1)).toBe("info Digest of 2 stories in 0.0s: 4 summaries by llama3.2");
  });

  test("log lines name a story by its title, not its id", async () => {
    const news = twoStories();
    using world = startDigestWorld({
      ...news,
      pages: {},
      ollama: {
        generate: (body) =>
          promptKind(body.prompt) === "article"
            ? echoTitle(body)
            : Response.json({ error: "model crashed" }, { status: 500 }),
      },
    });
    const { logger } = await digest(world);
    expect(logger.lines).toContain(
      "info “Show HN: A tiny database”: no article: the site answered HTTP 404",
    );
    expect(logger.lines).toContain(
      "warn “Ask HN: What are you reading?”: discussion summary failed: Ollama answered HTTP 500: model crashed",
    );
    expect(logger.lines.join("\n")).not.toMatch(/Story \d/);
  });

  test("summaryCounts() says where the summaries came from", () => {
    const counts = (generated: number, cached: number, failed: number) =>
      summaryCounts({ generated, cached, failed }, "llama3.2");
    expect(counts(20, 0, 0)).toBe("20 summaries by llama3.2");
    expect(counts(0, 20, 0)).toBe("20 summaries, all from the cache");
    expect(counts(0, 1, 0)).toBe("1 summary, from the cache");
    expect(counts(12, 8, 0)).toBe("20 summaries: 12 by llama3.2, 8 from the cache");
    expect(counts(19, 0, 1)).toBe("19 summaries by llama3.2, 1 failed");
    expect(counts(0, 0, 4)).toBe("no summaries, 4 failed");
  });

  test("--limit sets hitsPerPage and --max-comments the comments asked for", async () => {
    using world = startDigestWorld(twoStories());
    await digest(world, ["--limit", "1", "--max-comments=7"]);
    // As many hits as stories shown, as the search API's interface has a client ask.
    expect(world.search.requests[0]).toBe("/api/v1/search?tags=front_page&hitsPerPage=1");
    expect(world.search.requests[1]).toMatch(
      /^\/api\/v1\/search\?tags=comment,story_\d+&hitsPerPage=7$/,
    );
  });

  test("streams Markdown story by story as each is ready", async () => {
    const release = gate();
    let storyOneWrittenFirst = false;
    using world = startDigestWorld({
      ...twoStories(),
      ollama: {
        generate: async (body) => {
          // Only story 2's discussion is held, so one Ollama slot always stays free for story 1.
          const discussion = promptKind(body.prompt) === "discussion";
          if (discussion && body.prompt.includes("Ask HN: What are you reading?")) {
            await release.promise;
          }
          return echoTitle(body);
        },
      },
    });
    const { stdout } = await digest(world, ["--concurrency", "2"], {
      onWrite: (text) => {
        // Story 1 reaches stdout while story 2's discussion is still held in Ollama.
        if (text.includes("## 1.")) {
          storyOneWrittenFirst = !release.opened;
          release.open();
        }
      },
    });
    expect(storyOneWrittenFirst).toBe(true);
    expect(stdout.indexOf("## 1.")).toBeLessThan(stdout.indexOf("## 2."));
  }, 5_000);

  test("--format json prints exactly one JSON document", async () => {
    const news = twoStories();
    using world = startDigestWorld({
      ...news,
      ollama: {
        generate: (body) =>
          promptKind(body.prompt) === "discussion" && body.prompt.includes("Ask HN")
            ? Response.json({ error: "model crashed" })
            : echoTitle(body),
      },
    });
    const { stdout, chunks } = await digest(world, ["--format", "json"]);
    expect(chunks).toHaveLength(1);
    const doc = JSON.parse(stdout);
    expect(Object.keys(doc)).toEqual([
      "generatedAt",
      "model",
      "newSinceLastRun",
      "lastRunAt",
      "malformedHits",
      "sources",
      "stories",
      "incomplete",
    ]);
    expect(doc.sources).toEqual(["hn"]);
    expect(doc.generatedAt).toBe("2025-08-03T18:54:41.000Z");
    expect(doc.model).toBe("llama3.2");
    expect(doc.stories[0]).toEqual({
      id: Number(news.stories[0]?.objectID),
      title: "Show HN: A tiny database",
      url: `${world.site.url}/db`,
      hnUrl: `https://news.ycombinator.com/item?id=${news.stories[0]?.objectID}`,
      source: "hn",
      discussions: [
        {
          source: "hn",
          id: Number(news.stories[0]?.objectID),
          url: `https://news.ycombinator.com/item?id=${news.stories[0]?.objectID}`,
          points: 300,
          comments: 2,
        },
      ],
      tags: [],
      type: "show",
      site: "127.0.0.1",
      author: "pg",
      createdAt: "2025-08-03T18:54:41.000Z",
      age: "0 minutes ago",
      articleWords: 120,
      points: 300,
      pointsSinceLastRun: null,
      numComments: 2,
      isNew: null,
      articleSummary: "Summary of the article of Show HN: A tiny database.",
      articleSource: "article",
      discussionSummary: "Summary of the discussion of Show HN: A tiny database.",
      discussionCitations: [],
      commentsShown: 2,
      commentsTotal: 2,
      articleShare: 1,
      notes: [],
    });
    expect(doc.stories[1]).toMatchObject({
      url: null,
      discussionSummary: null,
      notes: ["Discussion summary failed: Ollama reported an error: model crashed."],
    });
  });

  test("--format html renders a page with titles and model output escaped", async () => {
    using world = startDigestWorld({
      stories: [
        storyHit({
          title: "<script>alert(1)</script> & co",
          url: undefined,
          story_text: "x",
          num_comments: 0,
        }),
      ],
      ollama: { generate: () => "<img src=x onerror=alert(2)> summary" },
    });
    const { stdout } = await digest(world, ["--format", "html"]);
    expect(stdout).toStartWith("<!doctype html>");
    expect(stdout).not.toContain("<script");
    expect(stdout).not.toContain("<img");
    expect(stdout).toContain("&#60;script&#62;alert(1)&#60;/script&#62; &#38; co");
  });

  test("--out writes the digest to a file and nothing to stdout", async () => {
    using world = startDigestWorld(twoStories());
    const dir = tempDir();
    const file = join(dir, "digest.md");
    const { stdout, error } = await digest(world, ["--out", file]);
    expect(error).toBeUndefined();
    expect(stdout).toBe("");
    expect(readFileSync(file, "utf8")).toStartWith("# Hacker News digest\n");
    expect(readdirSync(dir)).toEqual(["digest.md"]);
  });

  test("--out into a missing directory fails before any network call", async () => {
    let calls = 0;
    const countingFetch = (async () => {
      calls++;
      return new Response("{}");
    }) as unknown as typeof fetch;
    const missing = join(tempDir(), "no-such-dir", "d.md");
    const { error } = await digest(undefined, ["--out", missing], {
      fetch: countingFetch,
    });
    expect(error).toBeInstanceOf(UsageError);
    expect(calls).toBe(0);
  });

  test("strips control characters from titles, comments and model output", async () => {
    const evil = textPost("Totally \u001b[2J\u001b]0;pwned\u0007 normal", {
      story_text: "text",
      num_comments: 1,
    });
    using world = startDigestWorld({
      stories: [evil],
      comments: {
        [Number(evil.objectID)]: [
          commentHit(Number(evil.objectID), { comment_text: "hi\u001b[31m" }),
        ],
      },
      ollama: { generate: () => "Model \u001b[5mblinks\u001b[0m \u009b1m" },
    });
    const { stdout } = await digest(world);
    expect(stdout).not.toContain("\u001b");
    expect(stdout).not.toContain("\u0007");
    expect(stdout).not.toContain("\u009b");
    expect(stdout).toContain("## 1. Totally normal\n");
    expect(stdout).toContain("**Discussion.** Model blinks\n");
    expect(stdout).not.toMatch(/\[\d+m|\]0;/);
    expect(world.ollama.generateCalls).toHaveLength(2);
    for (const call of world.ollama.generateCalls) expect(call.prompt).not.toContain("\u001b");
  });

  describe("model output with a preamble, Markdown, HTML and escape sequences", () => {
    const answer = [
      "Sure! Here is a summary of the article:",
      "",
      "## Overview",
      "The **engine** is *fast*.\u001b]8;;https://evil.example/\u0007 Click\u001b]8;;\u0007 \u001b[31mred\u001b[0m",
      "",
      "* one",
      "* two",
      "",
      "<script>alert(1)</script><img src=x onerror=alert(2)>",
    ].join("\n");
    const world = () =>
      startDigestWorld({
        stories: [storyHit({ title: "T", url: undefined, story_text: "x", num_comments: 0 })],
        ollama: { generate: () => answer },
      });

    test("Markdown: no preamble, heading below story level, raw HTML escaped", async () => {
      using w = world();
      const { stdout } = await digest(w);
      expect(stdout).toContain(
        [
          "**Post.**",
          "",
          "#### Overview",
          "The **engine** is *fast*. Click red",
          "",
          "* one",
          "* two",
          "",
          "&lt;script>alert(1)&lt;/script>&lt;img src=x onerror=alert(2)>",
        ].join("\n"),
      );
      expect(stdout).not.toContain("\u001b");
      expect(stdout).not.toMatch(/Here is a summary|\]8;;|\[31m|<script|<img/);
    });

    test("HTML: Markdown rendered, raw HTML escaped", async () => {
      using w = world();
      const { stdout } = await digest(w, ["--format", "html"]);
      expect(stdout).toContain(
        "<h5>Overview</h5>\n<p>The <strong>engine</strong> is <em>fast</em>. Click red</p>\n<ul>\n<li>one</li>\n<li>two</li>\n</ul>",
      );
      expect(stdout).toContain(
        "&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;",
      );
      expect(stdout).not.toMatch(/Here is a summary|\*\*|<script|<img|\]8;;|\[31m/);
    });

    test("JSON: the model's Markdown kept as text, without preamble or escape sequences", async () => {
      using w = world();
      const { stdout } = await digest(w, ["--format", "json"]);
      const summary = JSON.parse(stdout).stories[0].articleSummary as string;
      expect(summary).toStartWith("## Overview\nThe **engine** is *fast*. Click red\n");
      expect(summary).not.toContain("\u001b");
      expect(summary).not.toMatch(/Here is|\]8;;|\[31m/);
    });
  });

  test("refuses a story link to a private address, with a note naming DIGEST_ALLOWED_HOSTS", async () => {
    using world = startDigestWorld({
      stories: [storyHit({ title: "Inside", url: "http://10.1.2.3:8080/admin", num_comments: 0 })],
    });
    const { stdout } = await digest(world);
    expect(stdout).toContain(
      "- No article summary: the link was not followed (refused 10.1.2.3 (private): set DIGEST_ALLOWED_HOSTS=10.1.2.3:8080 to allow it).",
    );
    expect(world.ollama.generateCalls).toEqual([]);
  });

  test("a note quoting a hostile redirect target shows in the Markdown as literal text", async () => {
    const location = "http://[<img src=x onerror=alert(1)>](javascript:alert(2)) *em* `code` ~~s~~";
    using world = startDigestWorld({
      stories: [storyHit({ title: "Moved", url: "/moved", num_comments: 0 })],
      pages: { "/moved": { redirect: location } },
    });
    const { stdout } = await digest(world);
    expect(viewNotes(stdout)).toBe(
      `<ul>\n<li>${htmlText(`No article summary: it redirects to an invalid address (${location}).`)}</li>\n<li>No discussion summary: there are no comments yet.</li>\n</ul>\n`,
    );
  });

  test("Ctrl-C stops the digest at once: no more stories, nothing left of --out", async () => {
    const signals = new EventEmitter();
    const held = gate();
    using world = startDigestWorld({
      ...twoStories(),
      ollama: {
        generate: async (body) => {
          if (!held.opened) {
            held.open();
            signals.emit("SIGINT");
          }
          return echoTitle(body);
        },
      },
    });
    const dir = tempDir();
    const { error, interrupted, logger } = await digest(world, ["--out", join(dir, "digest.md")], {
      signals,
    });
    expect(error).toBeUndefined();
    expect(interrupted).toBe(true);
    expect(readdirSync(dir)).toEqual([]);
    expect(logger.lines).toContain(
      `warn Interrupted after 0 of 2 stories; ${join(dir, "digest.md")} was left as it was`,
    );
  });

  test("Ctrl-C while the front page is read says so, with no story count it does not know", async () => {
    const signals = new EventEmitter();
    const never = gate();
    using world = startDigestWorld({
      ...twoStories(),
      intercept: async (url) => {
        if (url.searchParams.get("tags") !== "front_page") return undefined;
        signals.emit("SIGINT");
        await never.promise;
        return undefined;
      },
    });
    const { interrupted, logger } = await digest(world, [], { signals });
    never.open();
    expect(interrupted).toBe(true);
    expect(logger.lines).toEqual(["warn Interrupted before the front page was read"]);
    expect(world.ollama.generateCalls).toEqual([]);
  });

  test("a re-run over unchanged stories answers from the cache with no Ollama call", async () => {
    using world = startDigestWorld(twoStories());
    const cacheHome = tempDir();
    const first = await digest(world, [], { env: { XDG_CACHE_HOME: cacheHome } });
    expect(world.ollama.generateCalls).toHaveLength(4);
    expect(existsSync(join(cacheHome, "hn-digest", "summaries.sqlite"))).toBe(true);
    const second = await digest(world, [], { env: { XDG_CACHE_HOME: cacheHome } });
    expect(world.ollama.generateCalls).toHaveLength(4);
    expect(second.stdout).toBe(
      first.stdout.replace("· 2 stories\n", "· 2 stories · 0 new since the last run\n"),
    );
    expect(second.logger.lines.at(-1)).toContain(": 4 summaries, all from the cache");
  });

  test("marks the stories new since the previous run, with a count, and the points gained", async () => {
    const [a, b, c] = [1, 2, 3].map((i) =>
      storyHit({ title: `Story ${i}`, url: undefined, story_text: "x", num_comments: 0 }),
    );
    const cacheHome = tempDir();
    const env = { XDG_CACHE_HOME: cacheHome };
    {
      using world = startDigestWorld({ stories: [a, b] });
      const first = await digest(world, [], { env });
      expect(first.stdout).not.toContain("new since the last run");
      expect(first.stdout).not.toContain("**New**");
    }
    using world = startDigestWorld({ stories: [{ ...b, points: 150 }, c] });
    const { stdout } = await digest(world, ["--format", "json"], { env });
    const doc = JSON.parse(stdout);
    expect(doc.newSinceLastRun).toBe(1);
    expect(doc.lastRunAt).toBe("2025-08-03T18:54:41.000Z");
    expect(
      doc.stories.map((s: { title: string; isNew: boolean; pointsSinceLastRun: number }) => [
        s.title,
        s.isNew,
        s.pointsSinceLastRun,
      ]),
    ).toEqual([
      ["Story 2", false, 30],
      ["Story 3", true, null],
    ]);
    const markdown = await digest(world, [], { env });
    expect(markdown.stdout).toContain("· 2 stories · 0 new since the last run\n");
  });

  test("--no-cache bypasses the cache", async () => {
    using world = startDigestWorld(twoStories());
    const cacheHome = tempDir();
    await digest(world, [], { env: { XDG_CACHE_HOME: cacheHome } });
    await digest(world, ["--no-cache"], { env: { XDG_CACHE_HOME: cacheHome } });
    expect(world.ollama.generateCalls).toHaveLength(8);
  });

  test("shows progress on stderr only when it is a terminal", async () => {
    using world = startDigestWorld(twoStories());
    const onTerminal = await digest(world, [], { stderrTTY: true });
    expect(onTerminal.stderr).toContain("story 1/2 · ");
    expect(onTerminal.stderr).toContain("Show HN: A tiny database");
    expect(onTerminal.stdout).not.toContain("story 1/2");
    const inPipe = await digest(world, ["--no-cache"], { stderrTTY: false });
    expect(inPipe.stderr).toBe("");
  });

  test("clears the progress line before each story when stdout and stderr share a terminal", async () => {
    using world = startDigestWorld(twoStories());
    const terminal: string[] = [];
    await digest(world, [], { stderrTTY: true, terminal });
    expect(terminal.join("")).toContain("story 1/2 · ");
    const shown = screen(terminal);
    expect(shown.filter((line) => line.includes("story "))).toEqual([]);
    expect(shown).toContain(`## 1. [Show HN: A tiny database](${world.site.url}/db)`);
    expect(shown).toContain("## 2. Ask HN: What are you reading?");
  });

  test("retries a 429 on the front page, then succeeds", async () => {
    let first = true;
    using world = startDigestWorld({
      ...twoStories(),
      intercept: (url) => {
        if (url.searchParams.get("tags") !== "front_page" || !first) return undefined;
        first = false;
        return new Response("Too Many Requests", { status: 429, headers: { "retry-after": "1" } });
      },
    });
    const { stdout, error, logger } = await digest(world);
    expect(error).toBeUndefined();
    expect(stdout).toContain("## 2. Ask HN");
    expect(logger.lines).toContainEqual(
      expect.stringContaining("Search API HTTP 429, retry 1 of 4 in 1000 ms"),
    );
  });

  test("fails with a clear error when the front page answers 429 forever", async () => {
    using world = startDigestWorld({
      ...twoStories(),
      intercept: () => new Response("Too Many Requests", { status: 429 }),
    });
    const { error, stdout } = await digest(world);
    expect(error).toBeInstanceOf(SearchApiError);
    expect((error as Error).message).toStartWith(
      "Search API request failed (HTTP 429; gave up after 5 attempts): ",
    );
    expect(exitCodeFor(error)).toBe(1);
    expect(stdout).toBe("");
  });

  test("a front page that cannot be read stops the model's load too: no wait for it", async () => {
    using world = startDigestWorld({
      ...twoStories(),
      intercept: () => new Response("Too Many Requests", { status: 429 }),
    });
    let loadStopped = false;
    // Ollama loading the model, for as long as nobody gives up on it.
    const slowLoad = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init);
      const isLoad =
        request.url.endsWith("/api/generate") &&
        (await request.clone().text()).includes('"prompt":""');
      if (!isLoad) return fetch(input, init);
      return new Promise<Response>((_, reject) => {
        init?.signal?.addEventListener("abort", () => {
          loadStopped = true;
          reject(init.signal?.reason);
        });
      });
    }) as unknown as typeof fetch;
    const { error } = await digest(world, [], { fetch: slowLoad });
    expect(error).toBeInstanceOf(SearchApiError);
    expect(loadStopped).toBe(true);
  });

  test("an endless search answer stops the digest with exit 1, not a memory blow-up", async () => {
    const endless = endlessResponse();
    using world = startDigestWorld({
      ...twoStories(),
      intercept: (url) =>
        url.searchParams.get("tags") === "front_page" ? endless.response : undefined,
    });
    const { error, stdout } = await digest(world);
    expect(error).toBeInstanceOf(SearchApiError);
    expect((error as Error).message).toStartWith(
      "Search API answer is larger than 32 MiB; stopped reading it: ",
    );
    expect(exitCodeFor(error)).toBe(1);
    // Socket buffers let the server run somewhat ahead, but it stops soon after the cap.
    expect(endless.state.bytesSent).toBeLessThan(64 * 1024 * 1024);
    expect(stdout).toBe("");
  });

  test("an endless Ollama answer fails that summary with a note", async () => {
    using world = startDigestWorld({
      ...twoStories(),
      ollama: {
        generate: (body) =>
          body.prompt.includes("Ask HN") && promptKind(body.prompt) === "article"
            ? endlessResponse().response
            : echoTitle(body),
      },
    });
    const { error, stdout } = await digest(world);
    expect(error).toBeUndefined();
    expect(stdout).toContain(
      "- Article summary failed: Ollama's answer is larger than 8 MiB; stopped reading it.",
    );
    expect(stdout).toContain("**Discussion.** Summary of the discussion of Ask HN");
  });

  test("leaves a malformed front-page hit out: one story fewer, said in the header and a warning", async () => {
    const news = twoStories();
    using world = startDigestWorld({ ...news, stories: [{ objectID: 7 }, ...news.stories] });
    const { stdout, logger } = await digest(world, ["--limit", "3"]);
    expect(world.search.requests[0]).toBe("/api/v1/search?tags=front_page&hitsPerPage=3");
    expect(stdout).toContain("· 2 stories · 1 malformed front-page hit left out\n");
    expect(logger.lines).toContainEqual(
      expect.stringMatching(/^warn Front-page hit #1 \(objectID 7\) is malformed and left out/),
    );
  });

  test("fails when every summary fails, after writing what it could", async () => {
    // A failure of each call (a 400), not one meaning the model is gone: every call is made.
    using world = startDigestWorld({
      ...twoStories(),
      ollama: { generate: () => Response.json({ error: "boom" }, { status: 400 }) },
    });
    const { error, stdout } = await digest(world);
    expect(error).toBeInstanceOf(DigestFailedError);
    expect(stdout).toContain("Article summary failed: Ollama answered HTTP 400: boom.");
    expect(world.ollama.generateCalls).toHaveLength(4);
  });

  test("a story that cannot be written (a closed pipe) stops the calls still to come", async () => {
    // Six text posts without comments: one call each, one at a time.
    const posts = Array.from({ length: 6 }, (_, i) =>
      storyHit({ title: `Post ${i + 1}`, url: undefined, story_text: "Text.", num_comments: 0 }),
    );
    using world = startDigestWorld({ stories: posts });
    const { error } = await digest(world, [], {
      onWrite: (text) => {
        if (text.includes("## 1.")) throw new Error("EPIPE: broken pipe, write");
      },
    });
    expect((error as Error).message).toBe("EPIPE: broken pipe, write");
    // The first post's call, at most the second's in flight then: the rest are never made.
    expect(world.ollama.generateCalls.length).toBeLessThanOrEqual(2);
  });

  test("when every summary fails, --out is left as it was", async () => {
    using world = startDigestWorld({
      ...twoStories(),
      ollama: { generate: () => Response.json({ error: "boom" }, { status: 400 }) },
    });
    const dir = tempDir();
    const target = join(dir, "digest.md");
    writeFileSync(target, "yesterday's digest\n");
    const { error } = await digest(world, ["--out", target]);
    expect(error).toBeInstanceOf(DigestFailedError);
    expect((error as Error).message).toEndWith(`; ${target} was left as it was`);
    expect(readFileSync(target, "utf8")).toBe("yesterday's digest\n");
    expect(readdirSync(dir)).toEqual(["digest.md"]);
  });
});

describe("bun run digest: preflight", () => {
  test("stops before fetching anything when the model is missing", async () => {
    using world = startDigestWorld({ ...twoStories(), ollama: { models: ["mistral:latest"] } });
    const { error, stdout } = await digest(world);
    expect(error).toBeInstanceOf(PreflightError);
    expect((error as Error).message).toContain(`${world.ollama.url}/api/tags`);
    expect((error as Error).message).toContain("`ollama pull llama3.2`");
    expect(exitCodeFor(error)).toBe(1);
    expect(world.search.requests).toEqual([]);
    expect(stdout).toBe("");
  });

  test("stops before fetching anything when Ollama is unreachable", async () => {
    using world = startDigestWorld(twoStories());
    const closed = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
    const url = `http://127.0.0.1:${closed.port}`;
    closed.stop(true);
    const { error } = await digest(world, ["--ollama-url", url]);
    expect(error).toBeInstanceOf(PreflightError);
    expect((error as Error).message).toContain(`Ollama does not answer at ${url}/api/tags`);
    expect((error as Error).message).toContain("`ollama serve`");
    expect(world.search.requests).toEqual([]);
  });

  test("asks for no larger a window than the model's own context length", async () => {
    using world = startDigestWorld({ ...twoStories(), ollama: { contextLength: 4096 } });
    const { error, logger } = await digest(world, ["--num-ctx", "32768"]);
    expect(error).toBeUndefined();
    expect(world.ollama.showCalls).toEqual(["llama3.2"]);
    expect(world.ollama.generateCalls.map((call) => call.options?.num_ctx)).toEqual([
      4096, 4096, 4096, 4096,
    ]);
    expect(logger.lines).toContain(
      "info llama3.2 has a context length of 4096 tokens; using that instead of 32768 (OLLAMA_NUM_CTX / --num-ctx)",
    );
  });

  test("keeps the window asked for when /api/show says nothing (older Ollama)", async () => {
    using world = startDigestWorld({
      ...twoStories(),
      ollama: { show: () => new Response("404 page not found", { status: 404 }) },
    });
    const { error } = await digest(world);
    expect(error).toBeUndefined();
    expect(world.ollama.generateCalls[0]?.options).toEqual({ num_ctx: 8192, num_predict: 512 });
  });

  test("accepts a model name given with its tag", async () => {
    using world = startDigestWorld({ ...twoStories(), ollama: { models: ["qwen2.5:7b"] } });
    const { error } = await digest(world, ["--model", "qwen2.5:7b"]);
    expect(error).toBeUndefined();
    expect(world.ollama.generateCalls[0]?.model).toBe("qwen2.5:7b");
  });
});

describe("bun run digest: bad flags and env", () => {
  const countingFetch = () => {
    const state = { calls: 0 };
    const fetchFn = (async () => {
      state.calls++;
      return new Response("{}");
    }) as unknown as typeof fetch;
    return { state, fetchFn };
  };

  test.each([
    ["MAX_COMMENTS_PER_STORY", "abc"],
    ["MAX_COMMENTS_PER_STORY", "0"],
    ["MAX_COMMENTS_PER_STORY", "-3"],
    ["OLLAMA_ENDPOINT_URL", "localhost:11434"],
    ["HN_SEARCH_URL", "hn.algolia.com"],
    ["OLLAMA_NUM_CTX", "lots"],
    ["OLLAMA_MODEL", "bad model"],
    ["LLM_API", "anthropic"],
    ["OPENAI_BASE_URL", "localhost:8080/v1"],
    ["OPENAI_MODEL", "two words"],
    ["ARTICLE_TIMEOUT_MS", "soon"],
  ])("%s=%s exits 2 with one line, before any network call", async (name, value) => {
    const { state, fetchFn } = countingFetch();
    const { error } = await digest(undefined, [], { env: { [name]: value }, fetch: fetchFn });
    expect(error).toBeInstanceOf(ConfigError);
    expect(exitCodeFor(error)).toBe(2);
    expect((error as Error).message).toStartWith(`${name}="${value}" is invalid: expected `);
    expect((error as Error).message).not.toContain("\n");
    expect(state.calls).toBe(0);
  });

  test("a bad flag value exits 2 naming the flag", async () => {
    const { state, fetchFn } = countingFetch();
    const { error } = await digest(undefined, ["--format", "pdf"], { fetch: fetchFn });
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe(
      '--format="pdf" is invalid: expected one of markdown, json, html',
    );
    expect(state.calls).toBe(0);
  });

  test("an unknown option or a stray argument exits 2", async () => {
    const unknown = await digest(undefined, ["--formt", "json"]);
    expect(unknown.error).toBeInstanceOf(UsageError);
    expect((unknown.error as Error).message).toBe(
      "Unknown option --formt: did you mean --format? (see --help)",
    );
    const stray = await digest(undefined, ["today"]);
    expect(stray.error).toBeInstanceOf(UsageError);
  });

  test("--help documents every flag, its env var and its default", async () => {
    const usage = await renderHelp(
      createDigestCommand({ env: {}, stdout: { write() {} }, stderr: { write() {} } }),
    );
    for (const field of FIELDS) {
      if (field.flag) expect(usage).toContain(`--${field.flag}=<${field.hint}>`);
      if (field.env) expect(usage).toContain(field.env);
      const shown = field.defaultText ?? field.default;
      if (shown !== undefined) expect(usage).toContain(`default ${shown}`);
    }
    expect(usage).toContain("DIGEST_ALLOWED_HOSTS");
    expect(usage).toContain("--no-cache");
    expect(usage).toContain("XDG_CACHE_HOME");
    expect(usage).toContain("ollama pull llama3.2");
  });
});
