import type { RunRecord } from "./summarise/cache.ts";
import type { Story, StoryDigest } from "./types.ts";

export interface Freshness {
  /** Stories the previous run did not show; null with no previous run. */
  newCount: number | null;
  lastRunAt: string | null;
  /** The story digest with `isNew` and `pointsSinceLastRun` filled in. */
  mark(digest: StoryDigest): StoryDigest;
}

/** Compares this run's stories with the previous run's: which are new, how points moved. */
export function compareWithLastRun(
  stories: readonly Story[],
  lastRun: RunRecord | null,
): Freshness {
  if (lastRun === null) {
    return { newCount: null, lastRunAt: null, mark: (digest) => digest };
  }
  return {
    newCount: stories.filter((story) => !lastRun.points.has(story.id)).length,
    lastRunAt: new Date(lastRun.at).toISOString(),
    mark(digest) {
      const before = lastRun.points.get(digest.story.id);
      return {
        ...digest,
        isNew: before === undefined,
        pointsSinceLastRun: before === undefined ? null : digest.story.points - before,
      };
    },
  };
}
