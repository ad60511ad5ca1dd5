import { SOURCES } from "../fetch/sources.ts";
import type { DigestMeta, SourceName, StoryType } from "../types.ts";
import type { Incomplete } from "./types.ts";

const TYPE_LABELS: Record<StoryType, string> = {
  article: "Article",
  ask: "Ask HN",
  show: "Show HN",
  job: "Job",
  text: "Text post",
};

/** How a story's type is shown: Article, Ask HN, Show HN, Job, Text post. */
export function typeLabel(type: StoryType): string {
  return TYPE_LABELS[type];
}

/**
 * A story's age as Hacker News writes it (news.arc's text-age): whole minutes under an hour,
 * whole hours under a day, then whole days: "0 minutes ago", "1 hour ago", "1 day ago".
 * Null when the time is unknown.
 */
export function ageText(createdAt: number | null, nowMs: number): string | null {
  if (createdAt === null) return null;
  const minutes = Math.max(0, Math.floor((nowMs - createdAt * 1000) / 60_000));
  if (minutes >= 1440) return `${countText(Math.floor(minutes / 1440), "day")} ago`;
  if (minutes >= 60) return `${countText(Math.floor(minutes / 60), "hour")} ago`;
  return `${countText(minutes, "minute")} ago`;
}

/** "1 comment", "3 comments": a count and its noun, plural unless one. */
export function countText(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

/** "incomplete: 3 of 10 stories": the last words of a digest that stopped early. */
export function incompleteText(incomplete: Incomplete): string {
  return `incomplete: ${incomplete.written} of ${countText(incomplete.total, "story", "stories")}`;
}

/** Words a reader reads a minute: the usual figure for screen reading of non-fiction. */
export const WORDS_PER_MINUTE = 230;

/**
 * "6 min read" for an article of that many words; null when unknown, and for a text shorter
 * than half a minute's reading (a one-line post), where a time says nothing.
 */
export function readingTimeText(words: number | null | undefined): string | null {
  const minutes = Math.round((words ?? 0) / WORDS_PER_MINUTE);
  return minutes >= 1 ? `${minutes} min read` : null;
}

/** "512 points", with the gain since the previous run when there was one: "512 points (+40)". */
export function pointsText(points: number, since: number | null): string {
  const base = countText(points, "point");
  if (since === null || since === 0) return base;
  return `${base} (${since > 0 ? "+" : "−"}${Math.abs(since)} since the last run)`;
}

/** "· 1 malformed front-page hit left out", or nothing when there was none. */
export function malformedText(count: number | undefined): string {
  if (!count) return "";
  return ` · ${count} malformed front-page ${count === 1 ? "hit" : "hits"} left out`;
}

/** "· 3 new since the last run", or nothing when there is no run to compare with. */
export function newCountText(newCount: number | null): string {
  return newCount === null ? "" : ` · ${newCount} new since the last run`;
}

/** "Hacker News", "Lobsters and Hacker News": the sites read, in the order given (none: HN). */
export function sitesLabel(sources: Iterable<SourceName>): string {
  const names = [...new Set(sources)];
  return (names.length === 0 ? ["hn" as const] : names)
    .map((name) => SOURCES[name].label)
    .join(" and ");
}

/**
 * The digest's heading: "Hacker News digest", "Hacker News and Lobsters digest", a catch-up's
 * "… digest: the best of the last 7 days".
 */
export function digestTitle(meta: DigestMeta): string {
  const sites = sitesLabel(meta.sources ?? ["hn"]);
  if (!meta.catchUp) return `${sites} digest`;
  const { hours } = meta.catchUp;
  const span =
    hours === 24 ? "day" : hours % 24 === 0 ? `${hours / 24} days` : countText(hours, "hour");
  return `${sites} digest: the best of the last ${span}`;
}
