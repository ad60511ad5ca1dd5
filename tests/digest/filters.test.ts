import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { ConfigError } from "../../lib/config/errors.ts";
import { articleHtml } from "../fakes/article-site.ts";
import { runDigestCommand } from "../fakes/digest-run.ts";
import { startDigestWorld } from "../fakes/digest-world.ts";
import { commentHit, storyHit } from "../fakes/hn-search.ts";
import { tempDirs } from "../fakes/temp-dirs.ts";

setDefaultTimeout(30_000);

const tempDir = tempDirs("digest-filters-");

/** A story with an article on the fake site (or `url`) and two comments. */
function linked(
  id: number,
  title: string,
  options: { points?: number; comments?: number; url?: string } = {},
) {
  return storyHit({
    objectID: String(id),
    story_id: id,
    title,
    url: options.url ?? `/story/${id}`,
    points: options.points ?? 100,
    num_comments: options.comments ?? 2,
  });
}

function world(stories: ReturnType<typeof linked>[]) {
  const ids = stories.map((hit) => Number(hit.objectID));
  return startDigestWorld({
    stories,
    comments: Object.fromEntries(ids.map((id) => [id, [commentHit(id), commentHit(id)]])),
    pages: Object.fromEntries(
      ids.map((id) => [
        `/story/${id}`,
        { body: articleHtml(`Article ${id}`, [`Words of article ${id}. `.repeat(40)]) },
      ]),
    ),
  });
}

async function digest(
  fakes: ReturnType<typeof world>,
  rawArgs: string[],
  env: Record<string, string> = {},
) {
  const resolved: string[] = [];
  const run = await runDigestCommand({ ...fakes.env, XDG_CACHE_HOME: tempDir(), ...env }, rawArgs, {
    deps: {
      now: undefined,
      // A host the digest would look up: a story link it meant to fetch.
      resolve: async (host) => {
        resolved.push(host);
        return [];
      },
    },
  });
  return { ...run, resolved };
}

/** Every request a story caused: its comments, its article, a prompt naming it. */
function requestsFor(fakes: ReturnType<typeof world>, id: number, title: string): string[] {
  return [
    ...fakes.search.requests.filter((path) => path.includes(`story_${id}`)),
    ...fakes.site.requests.filter((path) => path === `/story/${id}`),
    ...fakes.ollama.generateCalls.filter((call) => call.prompt.includes(title)).map(() => "prompt"),
  ];
}

describe("bun run digest with filters", () => {
  test("without filters the front page is asked for --limit hits, as before", async () => {
    using fakes = world([linked(1, "Alpha"), linked(2, "Beta")]);
    const { error, logger } = await digest(fakes, ["--limit", "2"]);
    expect(error).toBeUndefined();
    expect(fakes.search.requests[0]).toBe("/api/v1/search?tags=front_page&hitsPerPage=2");
    expect(logger.lines.filter((line) => line.includes("Left out"))).toEqual([]);
  });

  test("a left-out story causes no comment, article, DNS or model request; one line says why", async () => {
    const stories = [
      linked(11, "Crypto is back", { url: "https://crypto.example/a" }),
      linked(12, "A quiet story", { points: 3 }),
      linked(13, "Rust in the kernel"),
      linked(14, "Blog post", { url: "http://news.skipped.test/post" }),
      linked(15, "Few comments here", { comments: 1 }),
      linked(16, "Zig and Rust"),
      linked(17, "Never reached"),
    ];
    using fakes = world(stories);
    const { error, logger, resolved } = await digest(fakes, [
      "--limit",
      "2",
      "--min-points",
      "10",
      "--min-comments",
      "2",
      "--skip",
      "crypto,skipped.test",
    ]);
    expect(error).toBeUndefined();
    // Three times --limit asked for.
    expect(fakes.search.requests[0]).toBe("/api/v1/search?tags=front_page&hitsPerPage=6");
    for (const hit of stories.filter((s) => !["13", "16"].includes(String(s.objectID)))) {
      expect(requestsFor(fakes, Number(hit.objectID), String(hit.title))).toEqual([]);
    }
    expect(resolved).toEqual([]);
    // The two kept stories were digested in full.
    expect(requestsFor(fakes, 13, "Rust in the kernel")).toHaveLength(4);
    expect(requestsFor(fakes, 16, "Zig and Rust")).toHaveLength(4);
    expect(logger.lines).toContain(
      "info Left out 4 of 6 front-page stories: 1 matching --skip crypto, 1 under 10 points, 1 matching --skip skipped.test, 1 under 2 comments",
    );
  });

  test("DIGEST_ONLY keeps matching titles and sites only; a flag beats its variable", async () => {
    using fakes = world([linked(21, "Rust 2.0"), linked(22, "Python 4"), linked(23, "Go 2")]);
    const byEnv = await digest(fakes, [], { DIGEST_ONLY: "rust,go" });
    expect(byEnv.error).toBeUndefined();
    expect(requestsFor(fakes, 22, "Python 4")).toEqual([]);
    expect(byEnv.logger.lines).toContain(
      "info Left out 1 of 3 front-page stories: 1 matching no --only entry; 2 of the 10 asked for remain",
    );
    const byFlag = await digest(fakes, ["--only", "python"], { DIGEST_ONLY: "rust" });
    expect(byFlag.logger.lines.find((line) => line.includes("Left out"))).toBe(
      "info Left out 2 of 3 front-page stories: 2 matching no --only entry; 1 of the 10 asked for remain",
    );
  });

  test("--only llm keeps the stories about LLMs, not a word that merely contains it", async () => {
    using fakes = world([linked(31, "LLMs at work"), linked(32, "The fullm framework")]);
    const run = await digest(fakes, ["--only", "llm"]);
    expect(run.error).toBeUndefined();
    expect(requestsFor(fakes, 32, "The fullm framework")).toEqual([]);
    expect(requestsFor(fakes, 31, "LLMs at work")).not.toEqual([]);
    expect(run.logger.lines).toContain(
      "info Left out 1 of 2 front-page stories: 1 matching no --only entry; 1 of the 10 asked for remain",
    );
  });

  test("a bad value is one line naming it, before any request", async () => {
    using fakes = world([linked(31, "Alpha")]);
    const { error } = await digest(fakes, ["--skip", "rust,bad host.com"]);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe(
      '--skip="rust,bad host.com" is invalid: entry "bad host.com": expected a host name such as example.com',
    );
    const points = await digest(fakes, [], { DIGEST_MIN_POINTS: "-1" });
    expect((points.error as Error).message).toBe(
      'DIGEST_MIN_POINTS="-1" is invalid: expected a whole number from 0 to 1000000',
    );
    expect(fakes.search.requests).toEqual([]);
  });
});
