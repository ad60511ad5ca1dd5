/**
 * An archived day's JSON read back: for the feed, for re-rendering a page (its neighbour got a
 * "next" link; a second run the same day merged into it) and for the index's headlines. Days
 * written by older versions (fewer fields) are read too; ids are kept exactly.
 */
import { z } from "zod";
import { itemId, parseJsonExactly } from "../fetch/exact-ids.ts";
import { LOBSTERS_KEY_PREFIX } from "../fetch/lobsters/client.ts";
import { discussionsOf, SOURCE_NAMES } from "../fetch/sources.ts";
import type { DigestMeta, SourceName, StoryDigest } from "../types.ts";
import { citationsFromNumbers } from "./citations.ts";

/** A day's JSON larger than this is not one of ours: skipped, never read into memory. */
export const MAX_DAY_BYTES = 16 * 1024 * 1024;

/** A story's key as archived: HN's id (digits kept exactly), or another source's prefixed key. */
export const storyKeySchema = z.union([
  z
    .union([
      z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
      z.string().regex(/^\d{1,30}$/),
    ])
    .transform(itemId),
  z.string().regex(new RegExp(`^${LOBSTERS_KEY_PREFIX}[a-z0-9]{1,20}$`, "i")),
]);

const sourceName = z.enum(SOURCE_NAMES as [SourceName, ...SourceName[]]);

const discussionSchema = z.object({
  source: sourceName,
  id: z.union([z.number(), z.string()]),
  url: z.string(),
  points: z.number(),
  comments: z.number(),
});

const storySchema = z
  .object({
    id: storyKeySchema,
    title: z.string(),
    url: z.string().nullable(),
    hnUrl: z.string().optional(),
    source: sourceName.optional(),
    discussions: z.array(discussionSchema).optional(),
    tags: z.array(z.string()).optional(),
    type: z.enum(["article", "ask", "show", "job", "text"]).catch("article"),
    site: z.string().nullable(),
    author: z.string().nullish(),
    createdAt: z.string().nullish(),
    points: z.number(),
    pointsSinceLastRun: z.number().nullish(),
    numComments: z.number(),
    articleWords: z.number().nullable().optional(),
    isNew: z.boolean().nullish(),
    articleSummary: z.string().nullable(),
    articleSource: z.enum(["article", "post", "article and post", "description"]).nullable(),
    discussionSummary: z.string().nullable(),
    discussionCitations: z.array(z.string()).catch([]).optional(),
    commentsShown: z.number().nullish(),
    commentsTotal: z.number().nullish(),
    articleShare: z.number().nullish(),
    notes: z.array(z.string()).catch([]),
    earlierToday: z.boolean().optional(),
  })
  // The summary's citations, numbered in the JSON, as markers again (for the page and the feed).
  .transform((story) => ({
    ...story,
    discussionSummary: citationsFromNumbers(
      story.discussionSummary,
      story.discussionCitations ?? [],
    ),
  }));

const daySchema = z.object({
  generatedAt: z.iso.datetime(),
  model: z.string(),
  newSinceLastRun: z.number().nullish(),
  lastRunAt: z.string().nullish(),
  malformedHits: z.number().optional(),
  sources: z.array(sourceName).optional().catch(undefined),
  catchUp: z
    .object({ from: z.string(), hours: z.number(), skipped: z.number() })
    .optional()
    .catch(undefined),
  stories: z.array(storySchema),
});

export type ArchivedStory = z.infer<typeof storySchema>;
export type ArchivedDay = z.infer<typeof daySchema>;

/** Reads `path` as an archived day; throws (a message for a warning) when it is not one. */
export async function readArchivedDay(path: string): Promise<ArchivedDay> {
  const file = Bun.file(path);
  if (file.size > MAX_DAY_BYTES) throw new Error(`larger than ${MAX_DAY_BYTES} bytes`);
  const parsed = daySchema.safeParse(parseJsonExactly(await file.text()));
  if (!parsed.success) throw new Error(z.prettifyError(parsed.error).split("\n")[0]);
  return parsed.data;
}

/** The day's header facts as a renderer takes them. */
export function archivedMeta(day: ArchivedDay): DigestMeta {
  return {
    generatedAt: day.generatedAt,
    model: day.model,
    total: day.stories.length,
    newCount: day.newSinceLastRun ?? null,
    lastRunAt: day.lastRunAt ?? null,
    malformedHits: day.malformedHits ?? 0,
    ...(day.catchUp ? { catchUp: day.catchUp } : {}),
    ...(day.sources ? { sources: day.sources } : {}),
  };
}

/** An archived story as the renderers take it (the post's own text is not archived). */
export function archivedDigest(story: ArchivedStory): StoryDigest {
  const createdAt = story.createdAt ? Date.parse(story.createdAt) : Number.NaN;
  const coverage = {
    commentsShown: story.commentsShown ?? null,
    commentsTotal: story.commentsTotal ?? null,
    articleShare: story.articleShare ?? null,
  };
  return {
    story: {
      id: story.id,
      ...(story.source ? { source: story.source } : {}),
      ...(story.discussions ? { discussions: story.discussions } : {}),
      ...(story.tags ? { tags: story.tags } : {}),
      title: story.title,
      url: story.url,
      storyText: null,
      author: story.author ?? null,
      points: story.points,
      numComments: story.numComments,
      type: story.type,
      site: story.site,
      createdAt: Number.isNaN(createdAt) ? null : Math.floor(createdAt / 1000),
    },
    hnUrl: discussionsOf(story)[0]?.url ?? "",
    articleSummary: story.articleSummary,
    articleSource: story.articleSource,
    discussionSummary: citationsFromNumbers(
      story.discussionSummary,
      story.discussionCitations ?? [],
    ),
    notes: story.notes,
    coverage,
    isNew: story.isNew ?? null,
    pointsSinceLastRun: story.pointsSinceLastRun ?? null,
    articleWords: story.articleWords ?? null,
    earlierToday: story.earlierToday === true ? true : undefined,
  };
}

/**
 * A second run the same day: its stories in its front-page order, then the day's earlier
 * stories it no longer shows, in their order, marked `earlierToday` so none is dropped. A story
 * the day's earlier run marked New stays New: the run an hour later compares with that one, and
 * would otherwise erase the day's marks.
 */
export function mergeDay(
  run: readonly StoryDigest[],
  earlier: readonly StoryDigest[],
): StoryDigest[] {
  const shown = new Set(run.map((digest) => String(digest.story.id)));
  const newEarlier = new Set(
    earlier.filter((digest) => digest.isNew === true).map((digest) => String(digest.story.id)),
  );
  const kept = run.map((digest) =>
    digest.isNew !== true && newEarlier.has(String(digest.story.id))
      ? { ...digest, isNew: true, pointsSinceLastRun: null }
      : digest,
  );
  const dropped = earlier
    .filter((digest) => !shown.has(String(digest.story.id)))
    .map((digest) => ({ ...digest, earlierToday: true as const }));
  return [...kept, ...dropped];
}

/**
 * The merged day's header facts: new since the run before the day's first (the marks mergeDay
 * kept), when the day's earlier run compared with one; the run's own facts otherwise.
 */
export function mergedMeta(
  run: DigestMeta,
  earlier: ArchivedDay | null,
  stories: readonly StoryDigest[],
): DigestMeta {
  const lastRunAt = earlier?.lastRunAt ?? null;
  if (lastRunAt === null) return { ...run, total: stories.length };
  const newCount = stories.filter((digest) => digest.isNew === true).length;
  return { ...run, total: stories.length, newCount, lastRunAt };
}
