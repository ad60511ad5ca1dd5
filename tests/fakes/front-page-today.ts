/**
 * A front page of today's shape for the time-budget measures: ten stories whose discussions run
 * from 366 comments down to 7 and whose articles from a long essay down to a short note, as on an
 * ordinary day. Deterministic, built from the digest corpus generators.
 */
import {
  BUSY_SHAPE,
  busyThread,
  grownThread,
  linkHeavyArticle,
  shapedThread,
} from "./digest-corpus.ts";
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

export interface FrontPage extends Pick<DigestWorldOptions, "stories" | "comments" | "pages"> {
  stories: Hit[];
  comments: Record<number, Hit[]>;
  /** Markers of the busiest thread's three largest subthreads (132, 47 and 11 comments). */
  largest: string[][];
  /** Paragraphs of each story's article, by title. */
  paragraphs: Record<string, number>;
}

/**
 * Today's ten stories. The busiest thread has the shape of `BUSY_SHAPE` (366 comments, largest
 * subthreads 132, 47 and 11); the others are busy threads of their size.
 */
export function frontPageToday(): FrontPage {
  const page: FrontPage = { stories: [], comments: {}, pages: {}, largest: [], paragraphs: {} };
  for (const [i, shape] of SHAPE.entries()) addStory(page, i + 1, shape, i);
  return page;
}

/**
 * The same front page an hour later: the first eight stories with threads 10 % longer, and two
 * new ones (of the shapes of today's 5th and 6th) in place of the last two.
 */
export function frontPageHourLater(today: FrontPage): FrontPage {
  const page: FrontPage = {
    stories: [],
    comments: {},
    pages: today.pages,
    largest: today.largest,
    paragraphs: { ...today.paragraphs },
  };
  for (const story of today.stories.slice(0, 8)) {
    const id = Number(story.objectID);
    const grown = grownThread({ hits: today.comments[id] ?? [] }, 0.1, id % 1000);
    page.stories.push({ ...story, num_comments: grown.length });
    page.comments[id] = grown;
  }
  for (const [n, i] of [
    [11, 4],
    [12, 5],
  ] as const) {
    const shape = SHAPE[i];
    if (shape) addStory(page, n, shape, 300 + n);
  }
  return page;
}

function addStory(
  page: FrontPage,
  n: number,
  shape: { comments: number; paragraphs: number },
  seed: number,
): void {
  const path = `/today/${n}`;
  const story = storyHit({
    title: `Front-page story ${n}`,
    url: path,
    num_comments: shape.comments,
    points: 600 - n * 50,
  });
  const id = Number(story.objectID);
  page.stories.push(story);
  page.paragraphs[String(story.title)] = shape.paragraphs;
  if (shape.comments === BUSY_SHAPE.total) {
    const thread = shapedThread(id);
    page.comments[id] = thread.hits;
    page.largest = thread.largest;
  } else {
    page.comments[id] = busyThread(id, {
      total: shape.comments,
      topLevel: Math.ceil(shape.comments * 0.3),
      seed: 100 + seed,
    }).hits;
  }
  const pages = page.pages ?? {};
  pages[path] = { body: linkHeavyArticle({ paragraphs: shape.paragraphs, seed: 200 + seed }).html };
  page.pages = pages;
}
