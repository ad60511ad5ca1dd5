/**
 * A fake Hacker News search API (Algolia) on 127.0.0.1, port 0, answering with the shapes in
 * shared/REFERENCE.md §1: front-page stories and flat, relevance-ordered comment lists.
 */

export type Hit = Record<string, unknown>;

let nextId = 40_000_000;

/** A story hit as the API sends it; `overrides` replace or (as undefined) remove fields. */
export function storyHit(overrides: Hit = {}): Hit {
  const id = nextId++;
  const hit: Hit = {
    _highlightResult: { title: { value: "A story", matchLevel: "none", matchedWords: [] } },
    _tags: ["story", "author_pg", `story_${id}`, "front_page"],
    author: "pg",
    children: [id + 1, id + 2],
    created_at: "2025-08-03T18:54:41Z",
    created_at_i: 1754247281,
    num_comments: 2,
    objectID: String(id),
    points: 120,
    story_id: id,
    title: `Story ${id}`,
    updated_at: "2025-08-03T19:10:02Z",
    // Relative on purpose: startDigestWorld serves it from the fake article site, so a test
    // that forgets to set a url can never reach the internet.
    url: `/story/${id}`,
    ...overrides,
  };
  for (const [key, value] of Object.entries(overrides)) if (value === undefined) delete hit[key];
  return hit;
}

/** A text post (no link: its text is on the page) titled `title`; `overrides` as storyHit's. */
export function textPost(title: string, overrides: Hit = {}): Hit {
  return storyHit({ title, url: undefined, story_text: `Text of ${title}`, ...overrides });
}

/** `count` text posts ("Post 1", "Text 1", …) without comments: one model call each, in order. */
export function textPosts(count: number): Hit[] {
  return Array.from({ length: count }, (_, i) =>
    textPost(`Post ${i + 1}`, { story_text: `Text ${i + 1}`, num_comments: 0 }),
  );
}

/** The Ask HN of the two-story runs: a text post with one comment. */
export function askHnHit(): Hit {
  return textPost("Ask HN: What are you reading?", {
    story_text: "Books, papers, anything.",
    points: 42,
    num_comments: 1,
  });
}

/** A comment hit; `parent_id` is the story id for a top-level comment. */
export function commentHit(storyId: number, overrides: Hit = {}): Hit {
  const id = nextId++;
  const hit: Hit = {
    _highlightResult: {},
    _tags: ["comment", `author_user${id}`, `story_${storyId}`],
    author: `user${id}`,
    children: [],
    comment_text: `Comment ${id}`,
    created_at: "2025-08-03T19:00:00Z",
    created_at_i: 1754247600 + (id % 1000),
    objectID: String(id),
    parent_id: storyId,
    points: null,
    story_id: storyId,
    story_title: "A story",
    story_url: "https://example.com/",
    updated_at: "2025-08-03T19:00:00Z",
    ...overrides,
  };
  for (const [key, value] of Object.entries(overrides)) if (value === undefined) delete hit[key];
  return hit;
}

/** The full top-level response shape around `hits`. */
export function searchResponse(hits: unknown[], params = ""): Hit {
  return {
    exhaustive: { nbHits: true, typo: true },
    exhaustiveNbHits: true,
    exhaustiveTypo: true,
    hits,
    hitsPerPage: hits.length,
    nbHits: hits.length,
    nbPages: 1,
    page: 0,
    params,
    processingTimeMS: 1,
    query: "",
    serverTimeMS: 2,
  };
}

export interface FakeHnSearchOptions {
  /** Story hits; anything else is sent as is (malformed hits). */
  stories: unknown[];
  /** Comment hits by story id. */
  comments?: Record<number, Hit[]>;
  /** Added to every answer (benchmark only; tests leave it at 0). */
  latencyMs?: number;
  /** Answers a request instead of the default (e.g. a 429); undefined falls through. */
  intercept?: (url: URL, count: number) => Response | undefined | Promise<Response | undefined>;
}

export interface FakeHnSearch {
  url: string;
  /** Every request's path and query, in arrival order. */
  requests: string[];
  userAgents: (string | null)[];
  stop(): void;
  [Symbol.dispose](): void;
}

export function startFakeHnSearch(options: FakeHnSearchOptions): FakeHnSearch {
  const requests: string[] = [];
  const userAgents: (string | null)[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const url = new URL(request.url);
      requests.push(`${url.pathname}${url.search}`);
      userAgents.push(request.headers.get("user-agent"));
      if (options.latencyMs) await Bun.sleep(options.latencyMs);
      const intercepted = await options.intercept?.(url, requests.length);
      if (intercepted) return intercepted;
      if (url.pathname === "/api/v1/search_by_date") {
        return Response.json(searchByDate(options.stories, url));
      }
      if (url.pathname !== "/api/v1/search") return new Response("not found", { status: 404 });
      const limit = Number(url.searchParams.get("hitsPerPage") ?? 20);
      const tags = url.searchParams.get("tags") ?? "";
      if (tags === "front_page") {
        return Response.json(searchResponse(options.stories.slice(0, limit), url.search.slice(1)));
      }
      const story = /^comment,story_(\d+)$/.exec(tags);
      if (story) {
        const hits = options.comments?.[Number(story[1])] ?? [];
        return Response.json(searchResponse(hits.slice(0, limit), url.search.slice(1)));
      }
      return Response.json(searchResponse([]));
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/api/v1`,
    requests,
    userAgents,
    stop: () => server.stop(true),
    [Symbol.dispose]: () => server.stop(true),
  };
}

/**
 * `search_by_date?tags=story&numericFilters=…`: the stories passing every filter (a comma list,
 * ANDed, on `created_at_i` and `points`), newest first, as Algolia answers it.
 */
function searchByDate(stories: readonly unknown[], url: URL): Hit {
  const limit = Number(url.searchParams.get("hitsPerPage") ?? 20);
  const filters = (url.searchParams.get("numericFilters") ?? "")
    .split(",")
    .filter((filter) => filter !== "")
    .map((filter) => {
      const match = /^(created_at_i|points)(>=|<=|>|<|=)(-?\d+)$/.exec(filter);
      if (!match) throw new Error(`fake search API: unknown numeric filter ${filter}`);
      return { field: match[1] as string, op: match[2] as string, value: Number(match[3]) };
    });
  const passes = (hit: Hit) =>
    filters.every(({ field, op, value }) => {
      const got = Number(hit[field] ?? 0);
      if (op === ">") return got > value;
      if (op === ">=") return got >= value;
      if (op === "<") return got < value;
      if (op === "<=") return got <= value;
      return got === value;
    });
  const hits = (stories as Hit[])
    .filter((hit) => hit && typeof hit === "object" && passes(hit))
    .sort((a, b) => Number(b.created_at_i ?? 0) - Number(a.created_at_i ?? 0));
  return searchResponse(hits.slice(0, limit), url.search.slice(1));
}
