/**
 * A front page of today's shape for the time-budget measures: ten stories whose discussions run
 * from 366 comments down to 7 and whose articles from a long essay down to a short note, as on an
 * ordinary day. Deterministic, built from the digest corpus generators.
 */
import { busyThread, linkHeavyArticle } from "./digest-corpus.ts";
import type { DigestWorldOptions } from "./digest-world.ts";
import { type Hit, storyHit } from "./hn-search.ts";

/** Comments and article paragraphs (about 380 characters each) per story, busiest first. */
const SHAPE = [
  { comments: 366, paragraphs: 110 },
  { comments: 241, paragraphs: 48 },
  { comments: 187, paragraphs: 24 },
  { comments: 152, paragraphs: 17 },
  { comments: 98, paragraphs: 66 },
  { comments: 75, paragraphs: 11 },
  { comments: 51, paragraphs: 32 },
  { comments: 33, paragraphs: 8 },
  { comments: 18, paragraphs: 150 },
  { comments: 7, paragraphs: 18 },
] as const;

export function frontPageToday(): Pick<DigestWorldOptions, "stories" | "comments" | "pages"> {
  const stories: Hit[] = [];
  const comments: Record<number, Hit[]> = {};
  const pages: DigestWorldOptions["pages"] = {};
  SHAPE.forEach((shape, i) => {
    const path = `/today/${i + 1}`;
    const story = storyHit({
      title: `Front-page story ${i + 1}`,
      url: path,
      num_comments: shape.comments,
      points: 600 - i * 50,
    });
    const id = Number(story.objectID);
    stories.push(story);
    comments[id] = busyThread(id, {
      total: shape.comments,
      topLevel: Math.ceil(shape.comments * 0.3),
      seed: 100 + i,
    }).hits;
    pages[path] = { body: linkHeavyArticle({ paragraphs: shape.paragraphs, seed: 200 + i }).html };
  });
  return { stories, comments, pages };
}
