/**
 * The seam every story source sits behind (Hacker News, Lobsters): a front page, the best
 * stories of a past window, and one story's comment tree. Nothing past the fetch stage asks which
 * source a story came from, except to label and link it.
 */
import type { Comment, Discussion, Story } from "../types.ts";
import type { SearchFetchOptions, WarnLogger } from "./search-fetch.ts";

export interface SourceFetchOptions extends SearchFetchOptions {
  logger?: WarnLogger;
}

/** A front page as read: its stories, and how many entries were malformed and left out. */
export interface FrontPage {
  stories: Story[];
  malformed: number;
}

/** A catch-up edition's window, in unix seconds, and the fewest points a story needs. */
export interface CatchUpWindow {
  from: number;
  to: number;
  minPoints: number;
}

export interface StorySource {
  /** The first `limit` stories the site ranks highest now, in its order. */
  frontPage(limit: number, options: SourceFetchOptions): Promise<FrontPage>;
  /** Up to `limit` stories posted within the window, most points first. */
  since(window: CatchUpWindow, limit: number, options: SourceFetchOptions): Promise<FrontPage>;
  /** The page where a reader opens the discussion of the story with this id on the site. */
  storyUrl(id: Discussion["id"]): string;
  /** One discussion's comments, flat, each naming its parent: the comment tree's material. */
  comments(
    discussion: Discussion,
    options: SourceFetchOptions & { max: number },
  ): Promise<Comment[]>;
}
