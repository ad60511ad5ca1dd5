import type { StoryType } from "../types.ts";

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

/** "just now", "12 minutes ago", "5 hours ago", "3 days ago"; null when the time is unknown. */
export function ageText(createdAt: number | null, nowMs: number): string | null {
  if (createdAt === null) return null;
  const minutes = Math.max(0, Math.floor((nowMs - createdAt * 1000) / 60_000));
  if (minutes < 1) return "just now";
  if (minutes < 60) return `${minutes} ${minutes === 1 ? "minute" : "minutes"} ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} ${hours === 1 ? "hour" : "hours"} ago`;
  return `${Math.floor(hours / 24)} days ago`;
}

/** "512 points", with the gain since the previous run when there was one: "512 points (+40)". */
export function pointsText(points: number, since: number | null): string {
  const base = `${points} ${points === 1 ? "point" : "points"}`;
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
