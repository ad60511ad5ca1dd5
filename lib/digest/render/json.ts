import { stripControl } from "../../text/control.ts";
import { discussionsOf } from "../fetch/sources.ts";
import type {
  ArticleSource,
  DigestMeta,
  Discussion,
  ItemId,
  SourceName,
  StoryDigest,
  StoryType,
} from "../types.ts";
import { citationsAsNumbers } from "./citations.ts";
import { ageText, incompleteText } from "./facts.ts";
import type { Renderer } from "./types.ts";

/** The JSON document's story entries, with the field names users script against. */
export interface JsonStory {
  /** A number; a string of digits beyond 2^53, where a JSON number would be read rounded. */
  id: ItemId;
  title: string;
  url: string | null;
  /** The first discussion's page (its own site's): kept under this name for scripts. */
  hnUrl: string;
  /** Where the story was read: "hn" or "lobsters". */
  source: SourceName;
  /** Its discussions, its own site's first; two when the link is on both sites. */
  discussions: Discussion[];
  /** The site's tags (Lobsters); empty for Hacker News. */
  tags: string[];
  /** "article", "ask", "show", "job" or "text". */
  type: StoryType;
  site: string | null;
  author: string | null;
  /** When it was posted (ISO), or null. */
  createdAt: string | null;
  /** "5 hours ago" at the time of the digest, or null. */
  age: string | null;
  points: number;
  /** Points gained since the previous run, or null when it did not show the story. */
  pointsSinceLastRun: number | null;
  numComments: number;
  /** Words of the linked article (or the post's own text), for its reading time; null if unknown. */
  articleWords: number | null;
  /** Not shown by the previous run; null when there is no previous run (or no cache). */
  isNew: boolean | null;
  articleSummary: string | null;
  /** "article", "post", "article and post", "description", or null with no summary. */
  articleSource: ArticleSource | null;
  /** The discussion summary, its citations numbered `[1]`, `[2]`… */
  discussionSummary: string | null;
  /** The pages of the comments the discussion summary cites: `[1]` is the first. */
  discussionCitations: string[];
  /** Comments the discussion summary was made from, of commentsTotal; null without one. */
  commentsShown: number | null;
  commentsTotal: number | null;
  /** Share of the article text the summary was made from (0 to 1); null without one. */
  articleShare: number | null;
  notes: string[];
  /** Only in the archive, on a story an earlier run the same day showed and the last did not. */
  earlierToday?: true;
}

export function toJsonStory(digest: StoryDigest, now: number): JsonStory {
  const { story } = digest;
  const discussion = citationsAsNumbers(digest.discussionSummary);
  return {
    id: story.id,
    title: story.title,
    url: story.url,
    hnUrl: digest.hnUrl,
    source: story.source ?? "hn",
    discussions: discussionsOf(story),
    tags: story.tags ?? [],
    type: story.type,
    site: story.site,
    author: story.author,
    createdAt: story.createdAt === null ? null : new Date(story.createdAt * 1000).toISOString(),
    age: ageText(story.createdAt, now),
    points: story.points,
    pointsSinceLastRun: digest.pointsSinceLastRun,
    numComments: story.numComments,
    articleWords: digest.articleWords ?? null,
    isNew: digest.isNew,
    articleSummary: digest.articleSummary,
    articleSource: digest.articleSource,
    discussionSummary: discussion.text,
    discussionCitations: discussion.pages,
    commentsShown: digest.coverage?.commentsShown ?? null,
    commentsTotal: digest.coverage?.commentsTotal ?? null,
    articleShare: digest.coverage?.articleShare ?? null,
    notes: digest.notes.map(stripControl),
    ...(digest.earlierToday ? { earlierToday: true as const } : {}),
  };
}

/**
 * Exactly one JSON document, written at the end:
 * `{generatedAt, model, newSinceLastRun, lastRunAt, malformedHits, sources, catchUp?, stories, incomplete}`;
 * `incomplete` is null, or "incomplete: 3 of 10 stories" when the run stopped early.
 */
export function jsonRenderer(): Renderer {
  let meta: DigestMeta | undefined;
  const stories: JsonStory[] = [];
  return {
    begin(value) {
      meta = value;
      return "";
    },
    story(digest) {
      stories.push(toJsonStory(digest, Date.parse(meta?.generatedAt ?? "")));
      return "";
    },
    end(incomplete) {
      // JSON.stringify escapes C0 controls (\u001b); C1 and BiDi characters are stripped from the
      // text that can carry them (notes quote remote sites; summaries and titles are cleaned earlier).
      const document = {
        generatedAt: meta?.generatedAt,
        model: meta?.model,
        newSinceLastRun: meta?.newCount ?? null,
        lastRunAt: meta?.lastRunAt ?? null,
        malformedHits: meta?.malformedHits ?? 0,
        sources: meta?.sources ?? ["hn"],
        // Only on a catch-up edition: {from, hours, skipped}.
        ...(meta?.catchUp ? { catchUp: meta.catchUp } : {}),
        stories,
        incomplete: incomplete ? incompleteText(incomplete) : null,
      };
      return `${escapeJsonSeparators(JSON.stringify(document, null, 2))}\n`;
    },
  };
}

/**
 * U+2028 and U+2029 as `\u2028` and `\u2029`: JSON allows them raw, but a script that embeds
 * the JSON (or an older parser) takes them for line ends; U+FEFF as `\ufeff`, so no invisible
 * byte-order mark sits in a title. They occur only inside strings, where the escape means the same.
 */
export function escapeJsonSeparators(json: string): string {
  return json.replace(/[\u2028\u2029\uFEFF]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16)}`);
}
