import { z } from "zod";
import { stripControl } from "../../../text/control.ts";
import { storyName } from "../../progress.ts";
import type { Comment, Discussion, ItemId, Story, StoryType } from "../../types.ts";
import { itemId } from "../exact-ids.ts";
import { htmlToText } from "../html-text.ts";
import { fetchSearchJson, SearchApiError, type WarnLogger } from "../search-fetch.ts";
import type { CatchUpWindow, FrontPage, SourceFetchOptions, StorySource } from "../source.ts";
import { isHttpUrl, siteOf } from "../story-links.ts";

/** `GET {base}/search?tags=front_page&hitsPerPage=<limit>`: the front page, in the API's order. */
export function frontPageUrl(base: string, limit: number): string {
  return `${base}/search?tags=front_page&hitsPerPage=${limit}`;
}

/**
 * `GET {base}/search_by_date?tags=story&numericFilters=created_at_i>from,created_at_i<to,points>=min`:
 * the stories of a past window (the filters are ANDed), newest first.
 */
export function sinceUrl(base: string, window: CatchUpWindow, max: number): string {
  const filters = [
    `created_at_i>${window.from}`,
    `created_at_i<${window.to}`,
    `points>=${window.minPoints}`,
  ].join(",");
  return `${base}/search_by_date?tags=story&numericFilters=${encodeURIComponent(filters)}&hitsPerPage=${max}`;
}

/** The search API's largest page. */
export const SEARCH_PAGE_MAX = 1000;

/** `GET {base}/search?tags=comment,story_<id>&hitsPerPage=<max>`: one story's comments, flat. */
export function commentsUrl(base: string, storyId: ItemId, max: number): string {
  return `${base}/search?tags=comment,story_${storyId}&hitsPerPage=${max}`;
}

/** The item page of a story on Hacker News itself. */
export function hnItemUrl(id: ItemId): string {
  return `https://news.ycombinator.com/item?id=${id}`;
}

// A number beyond 2^53 reaches here as its digits (parseJsonExactly), never rounded.
const numericId = z.union([z.string().regex(/^\d{1,30}$/), z.number().int().nonnegative()]);

// Fields may be absent or, in responses from before 2023, explicitly null: accept both.
const storyHitSchema = z.object({
  objectID: numericId,
  title: z.string().refine((title) => title.trim() !== "", "empty title"),
  url: z.string().nullish(),
  story_text: z.string().nullish(),
  author: z.string().nullish(),
  points: z.number().nullish(),
  num_comments: z.number().nullish(),
  created_at_i: z.number().nullish(),
  _tags: z.array(z.string()).nullish(),
});

const commentHitSchema = z.object({
  objectID: numericId,
  comment_text: z.string().nullish(),
  author: z.string().nullish(),
  parent_id: numericId.nullish(),
  created_at_i: z.number().nullish(),
});

const responseSchema = z.object({ hits: z.array(z.unknown()) });

export type HnClientOptions = SourceFetchOptions;

/** Hacker News through the search API at `base` (HN_SEARCH_URL). */
export function createHnSource(base: string): StorySource {
  return {
    frontPage: (limit, options) => fetchFrontPage(base, limit, options),
    since: (window, limit, options) => fetchSince(base, window, limit, options),
    storyUrl: hnItemUrl,
    comments: (discussion, options) => fetchComments(base, discussion.id, options),
  };
}

/**
 * The best stories posted within the window: every story over the points floor the API gives
 * (its largest page), most points first, the first `limit` of them.
 */
export async function fetchSince(
  base: string,
  window: CatchUpWindow,
  limit: number,
  options: HnClientOptions = {},
): Promise<FrontPage> {
  const url = sinceUrl(base, window, SEARCH_PAGE_MAX);
  const page = storiesOf(parseHits(await fetchSearchJson(url, options), url), options.logger);
  const best = page.stories.sort((a, b) => b.points - a.points).slice(0, limit);
  return { stories: best, malformed: page.malformed };
}

/**
 * Reads the first `limit` stories of the front page, in the API's order, asking for exactly
 * `limit` hits as the search API's interface has a client do. A malformed hit is left out with
 * a warning, so the digest is one story shorter; a bad response throws.
 */
export async function fetchFrontPage(
  base: string,
  limit: number,
  options: HnClientOptions = {},
): Promise<FrontPage> {
  const url = frontPageUrl(base, limit);
  const hits = parseHits(await fetchSearchJson(url, options), url);
  return storiesOf(hits.slice(0, limit), options.logger);
}

function storiesOf(hits: readonly unknown[], logger: WarnLogger | undefined): FrontPage {
  const stories: Story[] = [];
  let malformed = 0;
  for (const [index, hit] of hits.entries()) {
    const parsed = storyHitSchema.safeParse(hit);
    if (!parsed.success) {
      malformed++;
      logger?.warn(
        `Front-page hit #${index + 1}${describeHit(hit)} is malformed and left out: ${issueText(parsed.error)}`,
      );
      continue;
    }
    stories.push(toStory(parsed.data, logger));
  }
  return { stories, malformed };
}

/** Reads one story's comments (flat, relevance order). Malformed hits are skipped. */
export async function fetchComments(
  base: string,
  storyId: ItemId,
  options: HnClientOptions & { max: number },
): Promise<Comment[]> {
  const url = commentsUrl(base, storyId, options.max);
  const hits = parseHits(await fetchSearchJson(url, options), url);
  const comments: Comment[] = [];
  let skipped = 0;
  for (const hit of hits) {
    const parsed = commentHitSchema.safeParse(hit);
    if (!parsed.success) {
      skipped++;
      continue;
    }
    const data = parsed.data;
    const id = itemId(data.objectID);
    comments.push({
      id,
      url: hnItemUrl(id),
      parentId:
        data.parent_id === null || data.parent_id === undefined ? null : itemId(data.parent_id),
      author: data.author ? stripControl(data.author) : null,
      text: data.comment_text ? htmlToText(data.comment_text) : "",
      createdAt: data.created_at_i ?? null,
    });
  }
  if (skipped > 0) {
    options.logger?.warn(`Skipped ${skipped} malformed comment hit(s) of story ${storyId}`);
  }
  return comments;
}

function parseHits(body: unknown, url: string): unknown[] {
  const parsed = responseSchema.safeParse(body);
  if (!parsed.success) {
    throw new SearchApiError(`Search API answer has no "hits" list: ${url}`);
  }
  return parsed.data.hits;
}

function toStory(hit: z.infer<typeof storyHitSchema>, logger?: WarnLogger): Story {
  const id = itemId(hit.objectID);
  const title = stripControl(hit.title).replace(/\s+/g, " ").trim();
  let url = hit.url?.trim() || null;
  if (url !== null && !isHttpUrl(url)) {
    logger?.warn(`${storyName(title)} has a link that is not http(s); treating it as a text post`);
    url = null;
  }
  const storyText = hit.story_text ? htmlToText(hit.story_text) : "";
  const points = hit.points ?? 0;
  const numComments = hit.num_comments ?? 0;
  const discussion: Discussion = {
    source: "hn",
    id,
    url: hnItemUrl(id),
    points,
    comments: numComments,
  };
  return {
    id,
    source: "hn",
    discussions: [discussion],
    title,
    url,
    storyText: storyText === "" ? null : storyText,
    author: hit.author ? stripControl(hit.author) : null,
    type: storyType(hit._tags ?? [], title, url),
    site: url === null ? null : siteOf(url),
    createdAt: hit.created_at_i ?? null,
    points,
    numComments,
  };
}

/** Show HN, Ask HN (and other text posts such as Tell HN), job ads, or a linked article. */
export function storyType(tags: readonly string[], title: string, url: string | null): StoryType {
  if (tags.includes("show_hn") || /^show hn\b/i.test(title)) return "show";
  if (tags.includes("ask_hn") || /^ask hn\b/i.test(title)) return "ask";
  if (tags.includes("job")) return "job";
  return url === null ? "text" : "article";
}

function describeHit(hit: unknown): string {
  if (hit && typeof hit === "object" && "objectID" in hit) {
    return ` (objectID ${stripControl(String((hit as { objectID: unknown }).objectID)).slice(0, 40)})`;
  }
  return "";
}

function issueText(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "unexpected shape";
  const path = issue.path.join(".");
  return stripControl(path ? `${path}: ${issue.message}` : issue.message);
}
