/**
 * A fake Lobsters on 127.0.0.1, port 0, answering `/hottest.json` and `/s/ID.json` with the
 * shapes in shared/REFERENCE.md §6c: stories with their tags, and each story's comments as a flat
 * list in thread order naming each one's parent.
 */

export type LobstersJson = Record<string, unknown>;

let next = 1;

/** A short id as Lobsters makes them: six lowercase letters and digits. */
export function shortId(): string {
  return `l${(next++).toString(36).padStart(5, "0")}`;
}

/**
 * A story as `/hottest.json` lists it; `url` relative to the fake article site is left for the
 * world to resolve, as hn-search's storyHit does. `overrides` replace or (as undefined) remove.
 */
export function lobstersStory(base: string, overrides: LobstersJson = {}): LobstersJson {
  const id = (overrides.short_id as string | undefined) ?? shortId();
  const story: LobstersJson = {
    short_id: id,
    short_id_url: `${base}/s/${id}`,
    created_at: "2025-08-03T13:54:41.000-05:00",
    title: `Lobsters story ${id}`,
    url: `/lobsters/${id}`,
    score: 42,
    flags: 0,
    comment_count: 3,
    description: "",
    description_plain: "",
    comments_url: `${base}/s/${id}/lobsters_story_${id}`,
    // Newer responses name the submitter; older ones send an object. Both are accepted.
    submitter_user: "alice",
    user_is_author: false,
    tags: ["programming"],
    ...overrides,
  };
  for (const [key, value] of Object.entries(overrides)) if (value === undefined) delete story[key];
  return story;
}

/** A comment of a story's `/s/ID.json`; `parent` is the parent comment's short id (null: top). */
export function lobstersComment(
  base: string,
  overrides: LobstersJson & { parent?: string | null; depth?: number } = {},
): LobstersJson {
  const { parent = null, depth = parent === null ? 0 : 1, ...rest } = overrides;
  const id = (rest.short_id as string | undefined) ?? shortId();
  const comment: LobstersJson = {
    short_id: id,
    short_id_url: `${base}/c/${id}`,
    created_at: "2025-08-03T14:10:00.000-05:00",
    last_edited_at: "2025-08-03T14:10:00.000-05:00",
    is_deleted: false,
    is_moderated: false,
    score: 3,
    flags: 0,
    parent_comment: parent,
    comment: `<p>Comment ${id}</p>`,
    comment_plain: `Comment ${id}`,
    depth,
    indent_level: depth + 1,
    commenting_user: "bob",
    ...rest,
  };
  for (const [key, value] of Object.entries(rest)) if (value === undefined) delete comment[key];
  return comment;
}

export interface FakeLobstersOptions {
  /** `/hottest.json`'s stories (made with lobstersStory, the base given by `start`). */
  stories: (base: string) => LobstersJson[];
  /** Each story's comments, by short id, in thread order. */
  comments?: (base: string) => Record<string, LobstersJson[]>;
  /** Answers a request instead of the default (e.g. a 503); undefined falls through. */
  intercept?: (url: URL) => Response | undefined;
}

export interface FakeLobsters {
  url: string;
  requests: string[];
  userAgents: (string | null)[];
  stop(): void;
  [Symbol.dispose](): void;
}

export function startFakeLobsters(options: FakeLobstersOptions): FakeLobsters {
  const requests: string[] = [];
  const userAgents: (string | null)[] = [];
  let stories: LobstersJson[] = [];
  let comments: Record<string, LobstersJson[]> = {};
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(request) {
      const url = new URL(request.url);
      requests.push(url.pathname);
      userAgents.push(request.headers.get("user-agent"));
      const intercepted = options.intercept?.(url);
      if (intercepted) return intercepted;
      if (url.pathname === "/hottest.json") return Response.json(stories);
      const match = /^\/s\/([a-z0-9]+)\.json$/.exec(url.pathname);
      const story = match ? stories.find((entry) => entry.short_id === match[1]) : undefined;
      if (!match || !story) return new Response("not found", { status: 404 });
      return Response.json({ ...story, comments: comments[match[1] as string] ?? [] });
    },
  });
  const base = `http://127.0.0.1:${server.port}`;
  stories = options.stories(base);
  comments = options.comments?.(base) ?? {};
  return {
    url: base,
    requests,
    userAgents,
    stop: () => server.stop(true),
    [Symbol.dispose]: () => server.stop(true),
  };
}
