/**
 * Lobsters as a story source (shared/REFERENCE.md §6c): `/hottest.json` for the front page, a
 * story's `/s/ID.json` for its comments, a flat list in thread order naming each one's parent.
 * Its requests go one at a time, as the site asks of tools.
 */
import { z } from "zod";
import { stripControl } from "../../../text/control.ts";
import { storyName } from "../../progress.ts";
import type { Comment, Discussion, Story } from "../../types.ts";
import { htmlToText } from "../html-text.ts";
import { fetchSearchJson, SearchApiError, type WarnLogger } from "../search-fetch.ts";
import type { CatchUpWindow, FrontPage, SourceFetchOptions, StorySource } from "../source.ts";
import { isHttpUrl, siteOf } from "../story-links.ts";

/** The prefix of a Lobsters story's key in the cache and the archive: `lobsters-abc123`. */
export const LOBSTERS_KEY_PREFIX = "lobsters-";

const shortId = z.string().regex(/^[a-z0-9]{1,20}$/i);
const when = z.string().nullish();
// Older responses send the submitter as an object, newer ones as the name alone: accept both.
const user = z
  .union([z.string(), z.object({ username: z.string() }).transform((value) => value.username)])
  .nullish();

const storySchema = z.object({
  short_id: shortId,
  short_id_url: z.string().nullish(),
  comments_url: z.string().nullish(),
  created_at: when,
  title: z.string().refine((title) => title.trim() !== "", "empty title"),
  url: z.string().nullish(),
  score: z.number().nullish(),
  comment_count: z.number().nullish(),
  description: z.string().nullish(),
  submitter_user: user,
  tags: z.array(z.string()).nullish(),
});

const commentSchema = z.object({
  short_id: shortId,
  short_id_url: z.string().nullish(),
  created_at: when,
  comment: z.string().nullish(),
  comment_plain: z.string().nullish(),
  is_deleted: z.boolean().nullish(),
  is_moderated: z.boolean().nullish(),
  parent_comment: shortId.nullish(),
  commenting_user: user,
});

export function hottestUrl(base: string): string {
  return `${base}/hottest.json`;
}

export function storyJsonUrl(base: string, id: string | number): string {
  return `${base}/s/${encodeURIComponent(String(id))}.json`;
}

/** Lobsters at `base` (LOBSTERS_URL), its requests one at a time. */
export function createLobstersSource(base: string): StorySource {
  let queue: Promise<unknown> = Promise.resolve();
  const oneAtATime = <T>(request: () => Promise<T>): Promise<T> => {
    const turn = queue.then(request, request);
    queue = turn.catch(() => {});
    return turn;
  };
  const hottest = (options: SourceFetchOptions) =>
    oneAtATime(() => fetchSearchJson(hottestUrl(base), { ...options, service: "Lobsters" }));
  return {
    async frontPage(limit, options) {
      return storiesOf(await hottest(options), base, options.logger, limit);
    },
    // Lobsters has no search by date: its catch-up is the hottest stories posted in the window.
    async since(window, limit, options) {
      const page = storiesOf(
        await hottest(options),
        base,
        options.logger,
        Number.POSITIVE_INFINITY,
      );
      const stories = page.stories
        .filter((story) => within(story, window))
        .sort((a, b) => b.points - a.points)
        .slice(0, limit);
      return { stories, malformed: page.malformed };
    },
    storyUrl: (id) => `${base}/s/${encodeURIComponent(String(id))}`,
    async comments(discussion, options) {
      const url = storyJsonUrl(base, discussion.id);
      const body = await oneAtATime(() =>
        fetchSearchJson(url, { ...options, service: "Lobsters" }),
      );
      return commentsOf(body, base, url, options.logger);
    },
  };
}

function within(story: Story, window: CatchUpWindow): boolean {
  const at = story.createdAt;
  return at !== null && at > window.from && at < window.to && story.points >= window.minPoints;
}

function storiesOf(
  body: unknown,
  base: string,
  logger: WarnLogger | undefined,
  limit: number,
): FrontPage {
  if (!Array.isArray(body)) {
    throw new SearchApiError(`Lobsters answer is not a list of stories: ${hottestUrl(base)}`);
  }
  const stories: Story[] = [];
  let malformed = 0;
  // The first `limit` entries, as HN's front page: a malformed one makes the page one shorter.
  for (const [index, entry] of body.slice(0, limit).entries()) {
    const parsed = storySchema.safeParse(entry);
    if (!parsed.success) {
      malformed++;
      logger?.warn(`Lobsters story #${index + 1} is malformed and left out`);
      continue;
    }
    stories.push(toStory(parsed.data, base, logger));
  }
  return { stories, malformed };
}

function toStory(
  entry: z.infer<typeof storySchema>,
  base: string,
  logger: WarnLogger | undefined,
): Story {
  const title = stripControl(entry.title).replace(/\s+/g, " ").trim();
  let url = entry.url?.trim() || null;
  if (url !== null && !isHttpUrl(url)) {
    logger?.warn(`${storyName(title)} has a link that is not http(s); treating it as a text post`);
    url = null;
  }
  const text = entry.description ? htmlToText(entry.description) : "";
  const points = entry.score ?? 0;
  const comments = entry.comment_count ?? 0;
  const discussion: Discussion = {
    source: "lobsters",
    id: entry.short_id,
    url: pageUrl(entry.comments_url ?? entry.short_id_url, `${base}/s/${entry.short_id}`),
    points,
    comments,
  };
  return {
    id: `${LOBSTERS_KEY_PREFIX}${entry.short_id}`,
    source: "lobsters",
    discussions: [discussion],
    tags: (entry.tags ?? []).map((tag) => stripControl(tag).toLowerCase()),
    title,
    url,
    storyText: text === "" ? null : text,
    author: entry.submitter_user ? stripControl(entry.submitter_user) : null,
    points,
    numComments: comments,
    type: url === null ? "text" : "article",
    site: url === null ? null : siteOf(url),
    createdAt: unixSeconds(entry.created_at),
  };
}

function commentsOf(
  body: unknown,
  base: string,
  url: string,
  logger: WarnLogger | undefined,
): Comment[] {
  const list =
    body && typeof body === "object" && "comments" in body
      ? (body as { comments: unknown }).comments
      : undefined;
  if (!Array.isArray(list))
    throw new SearchApiError(`Lobsters story has no "comments" list: ${url}`);
  const comments: Comment[] = [];
  let skipped = 0;
  for (const entry of list) {
    const parsed = commentSchema.safeParse(entry);
    if (!parsed.success) {
      skipped++;
      continue;
    }
    const data = parsed.data;
    const gone = data.is_deleted === true || data.is_moderated === true;
    comments.push({
      id: data.short_id,
      url: pageUrl(data.short_id_url, `${base}/c/${data.short_id}`),
      parentId: data.parent_comment ?? null,
      author: data.commenting_user ? stripControl(data.commenting_user) : null,
      text: gone ? "" : commentText(data),
      createdAt: unixSeconds(data.created_at),
    });
  }
  if (skipped > 0) logger?.warn(`Skipped ${skipped} malformed Lobsters comment(s) of ${url}`);
  return comments;
}

function commentText(data: z.infer<typeof commentSchema>): string {
  if (data.comment) return htmlToText(data.comment);
  return data.comment_plain ? stripControl(data.comment_plain).trim() : "";
}

/** The page the site names, when it is a web link; else the one made from the base. */
function pageUrl(given: string | null | undefined, fallback: string): string {
  return given && isHttpUrl(given) ? given : fallback;
}

function unixSeconds(iso: string | null | undefined): number | null {
  if (!iso) return null;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? null : Math.floor(ms / 1000);
}
