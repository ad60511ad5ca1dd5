/**
 * A Hacker News item id, exactly: a number while it is a safe integer, its decimal digits as a
 * string beyond 2^53 (where a number would round to a neighbour's id).
 */
export type ItemId = number | string;

/** The sites stories come from: a row each of SOURCES (fetch/sources.ts). */
export type SourceName = "hn" | "lobsters";

/** A story's discussion on one site: where a reader opens it, and what its source fetches. */
export interface Discussion {
  source: SourceName;
  /** The story's id on that site: HN's number, Lobsters' short id. */
  id: ItemId;
  /** The discussion's page. */
  url: string;
  points: number;
  comments: number;
}

/** What kind of post a story is. `text` is a post without a link that is not Ask HN (Tell HN…). */
export type StoryType = "article" | "ask" | "show" | "job" | "text";

/** A front-page story, validated and with its text already cleaned. */
export interface Story {
  /**
   * The story's key in the cache and the archive: HN's id as it is, another source's prefixed
   * with its name (`lobsters-abc123`).
   */
  id: ItemId;
  /** Where the story was read; absent: Hacker News. */
  source?: SourceName;
  /**
   * Its discussions, its own site's first; one more when the same link is on another site.
   * Absent: the Hacker News item page of `id`.
   */
  discussions?: Discussion[];
  /** The site's tags (Lobsters), which --skip and --only match as words. */
  tags?: string[];
  title: string;
  /** The linked article; null for text posts such as Ask HN. */
  url: string | null;
  /** The post's own text (Ask HN), as plain text; null when there is none. */
  storyText: string | null;
  author: string | null;
  points: number;
  numComments: number;
  type: StoryType;
  /** The link's host without `www.`; null for text posts. */
  site: string | null;
  /** When it was posted (unix seconds), when the API says. */
  createdAt: number | null;
}

/** One comment as the search API gives it (a flat list); `text` is plain text. */
export interface Comment {
  id: ItemId;
  /** The comment's own page (a summary's citations link there); absent: none known. */
  url?: string;
  parentId: ItemId | null;
  author: string | null;
  text: string;
  createdAt: number | null;
}

export interface ThreadNode {
  comment: Comment;
  /**
   * What the comment answers: the story (top-level), a comment in the tree, or a comment that
   * was not fetched or was deleted (the node then sits at the top of the tree all the same).
   */
  answers: "story" | "comment" | "missing" | "deleted";
  replies: ThreadNode[];
}

/**
 * What the article summary was made from: the linked article, the post's own text (Ask HN),
 * both (Show HN with text), or, for a page that is no article (a JavaScript wall, a paywall
 * teaser, a video page), the page's own description shown as it is.
 */
export type ArticleSource = "article" | "post" | "article and post" | "description";

/** How much of a story reached the model, as numbers; null where there is no summary. */
export interface Coverage {
  /** Comments in the discussion prompt. */
  commentsShown: number | null;
  /** Comments in the discussion (deleted ones not counted; unfetched ones are). */
  commentsTotal: number | null;
  /** Share of the article text in the prompt, 0 to 1. */
  articleShare: number | null;
}

/** What the digest says about one story. A summary that could not be made is null. */
export interface StoryDigest {
  story: Story;
  hnUrl: string;
  articleSummary: string | null;
  /** Null when there is no article summary. */
  articleSource: ArticleSource | null;
  discussionSummary: string | null;
  /** Why something is missing, in plain sentences. */
  notes: string[];
  /** How much the model saw; absent where nothing was measured. */
  coverage?: Coverage;
  /** Not shown by the previous run; null when there is no previous run to compare with. */
  isNew: boolean | null;
  /** Points gained since the previous run showed it; null when it did not (or none is known). */
  pointsSinceLastRun: number | null;
  /** Words of the linked article (or of the post's own text): the story's reading time. */
  articleWords?: number | null;
  /**
   * In the archive, a story an earlier run of the same day showed and this run no longer does:
   * kept on the day's page, under "Earlier today".
   */
  earlierToday?: true;
}

export interface DigestMeta {
  generatedAt: string;
  model: string;
  total: number;
  /** Stories not shown by the previous run; null when there is none to compare with. */
  newCount: number | null;
  /** When the previous run was (ISO), or null. */
  lastRunAt: string | null;
  /** Front-page hits left out because they were malformed (the digest is that much shorter). */
  malformedHits?: number;
  /** A catch-up edition (--since, --days): the best stories posted since `from` (ISO). */
  catchUp?: CatchUp;
  /** The sites read, in --source's order; absent (days from before sources): Hacker News. */
  sources?: SourceName[];
}

export interface CatchUp {
  from: string;
  /** Its reach in hours (168 for 7 days). */
  hours: number;
  /** Stories left out because the archive had summarised them already. */
  skipped: number;
}
