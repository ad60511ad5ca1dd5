import type { StoredSummary } from "../../lib/digest/summarise/cache.ts";

/**
 * A discussion summary as the summary cache keeps it: 120 of a thread's 300 comments shown, never
 * updated, stored at 0; `overrides` change any field.
 */
export function storedSummary(overrides: Partial<StoredSummary> = {}): StoredSummary {
  return {
    summary: "summary",
    sourceHash: "h1",
    comments: 300,
    shown: 120,
    latestCommentAt: 1754247600,
    updates: 0,
    createdAt: 0,
    ...overrides,
  };
}
