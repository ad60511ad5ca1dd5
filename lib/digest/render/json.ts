import type { ArticleSource, DigestMeta, StoryDigest } from "../types.ts";
import type { Renderer } from "./types.ts";

/** The JSON document's story entries, with the field names users script against. */
export interface JsonStory {
  id: number;
  title: string;
  url: string | null;
  hnUrl: string;
  points: number;
  numComments: number;
  articleSummary: string | null;
  /** "article", "post", "article and post", "description", or null with no summary. */
  articleSource: ArticleSource | null;
  discussionSummary: string | null;
  notes: string[];
}

export function toJsonStory(digest: StoryDigest): JsonStory {
  return {
    id: digest.story.id,
    title: digest.story.title,
    url: digest.story.url,
    hnUrl: digest.hnUrl,
    points: digest.story.points,
    numComments: digest.story.numComments,
    articleSummary: digest.articleSummary,
    articleSource: digest.articleSource,
    discussionSummary: digest.discussionSummary,
    notes: digest.notes,
  };
}

/** Exactly one JSON document, written at the end: `{generatedAt, model, stories}`. */
export function jsonRenderer(): Renderer {
  let meta: DigestMeta | undefined;
  const stories: JsonStory[] = [];
  return {
    begin(value) {
      meta = value;
      return "";
    },
    story(digest) {
      stories.push(toJsonStory(digest));
      return "";
    },
    end() {
      // JSON.stringify escapes control characters (\u001b), so the document is terminal-safe.
      return `${JSON.stringify({ generatedAt: meta?.generatedAt, model: meta?.model, stories }, null, 2)}\n`;
    },
  };
}
