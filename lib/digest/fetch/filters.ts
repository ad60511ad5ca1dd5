/**
 * The reader's filters (--min-points, --min-comments, --skip, --only), applied to the front page
 * as read, before any article, comment or model request: a story left out costs nothing more.
 */
import type { Story } from "../types.ts";

/**
 * One --skip / --only entry: a word or phrase of the title (its plural too), or (with a dot) a
 * site.
 */
export type FilterEntry =
  | { kind: "word"; text: string; pattern: RegExp }
  | { kind: "host"; text: string };

export interface StoryFilter {
  minPoints: number;
  minComments: number;
  skip: readonly FilterEntry[];
  only: readonly FilterEntry[];
}

export const NO_FILTER: StoryFilter = { minPoints: 0, minComments: 0, skip: [], only: [] };

/** The front page is asked for this many times --limit when filters may leave stories out. */
export const FILTER_HEADROOM = 3;
/** The search API's largest page. */
const MAX_HITS = 1000;

const HOST = /^(?=.{1,253}$)(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))+$/;

/**
 * "rust, crypto ,example.com" → entries; throws with the entry at fault. An entry with a dot is
 * a host name (matched with its subdomains), anything else a word or phrase of the title.
 */
export function parseFilterList(text: string): FilterEntry[] {
  const entries: FilterEntry[] = [];
  for (const raw of text.split(",")) {
    const entry = raw.trim().replace(/\s+/g, " ").toLowerCase();
    if (entry === "") continue;
    if (/[\p{Cc}]/u.test(entry) || entry.length > 200) {
      throw new Error(
        `entry ${JSON.stringify(raw.trim().slice(0, 40))}: expected a word or a host name`,
      );
    }
    if (entry.includes(".")) {
      const host = entry.replace(/^www\./, "");
      if (!HOST.test(host)) {
        throw new Error(`entry ${JSON.stringify(entry)}: expected a host name such as example.com`);
      }
      entries.push({ kind: "host", text: host });
    } else {
      entries.push({ kind: "word", text: entry, pattern: wholeWord(entry) });
    }
  }
  if (entries.length === 0) throw new Error("expected a comma-separated list of words or hosts");
  return entries;
}

/**
 * The entry as a whole word (or phrase) of a title, any case, its last word also in the plural
 * or possessive: "llm" is in "LLMs" and "an LLM's", "policy" in "policies", "open source" in
 * "Open-source"; "go" is not in "Google" nor "llm" in "fullm".
 */
function wholeWord(text: string): RegExp {
  const escaped = text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/ /g, "[\\s-]+");
  const forms = [`${escaped}(?:e?s|['’]s|s['’])?`];
  // "policy" → "policies"; "day" → "days" is the rule above.
  if (/[^aeiou]y$/.test(text)) forms.push(`${escaped.slice(0, -1)}ies`);
  return new RegExp(`(?<![\\p{L}\\p{N}_])(?:${forms.join("|")})(?![\\p{L}\\p{N}_])`, "iu");
}

export function hasFilters(filter: StoryFilter): boolean {
  return (
    filter.minPoints > 0 ||
    filter.minComments > 0 ||
    filter.skip.length > 0 ||
    filter.only.length > 0
  );
}

/** Hits to ask the front page for: --limit, or three times it with filters (the API's page at most). */
export function hitsWanted(limit: number, filter: StoryFilter): number {
  return hasFilters(filter) ? Math.min(limit * FILTER_HEADROOM, MAX_HITS) : limit;
}

/** The first entry the story matches: a title word or tag, or its link's host or a parent domain. */
export function matchingEntry(
  story: Story,
  entries: readonly FilterEntry[],
): FilterEntry | undefined {
  const host = hostOf(story.url);
  // A word matches the title, or one of the site's tags (Lobsters': "rust", "security").
  return entries.find((entry) =>
    entry.kind === "word"
      ? entry.pattern.test(story.title) || (story.tags ?? []).some((tag) => entry.pattern.test(tag))
      : host !== null && (host === entry.text || host.endsWith(`.${entry.text}`)),
  );
}

/** Why a story is left out, as the line on stderr counts it; null when it stays. */
export function leftOutBecause(story: Story, filter: StoryFilter): string | null {
  const skipped = matchingEntry(story, filter.skip);
  if (skipped) return `matching --skip ${skipped.text}`;
  if (filter.only.length > 0 && !matchingEntry(story, filter.only))
    return "matching no --only entry";
  if (story.points < filter.minPoints) return `under ${filter.minPoints} points`;
  if (story.numComments < filter.minComments) return `under ${filter.minComments} comments`;
  return null;
}

export interface FilteredFrontPage {
  /** At most `limit`, in front-page order. */
  stories: Story[];
  /** "Left out 5 of 30 front-page stories: 3 under 50 points, 2 matching --skip crypto", or null. */
  line: string | null;
}

/** The stories that pass, trimmed to `limit`, and one line saying what was left out and why. */
export function applyFilters(
  stories: readonly Story[],
  filter: StoryFilter,
  limit: number,
): FilteredFrontPage {
  if (!hasFilters(filter)) return { stories: stories.slice(0, limit), line: null };
  const kept: Story[] = [];
  const reasons = new Map<string, number>();
  let examined = 0;
  for (const story of stories) {
    if (kept.length === limit) break;
    examined++;
    const reason = leftOutBecause(story, filter);
    if (reason === null) kept.push(story);
    else reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
  }
  const leftOut = examined - kept.length;
  const short = kept.length < limit ? `; ${kept.length} of the ${limit} asked for remain` : "";
  if (leftOut === 0)
    return { stories: kept, line: short === "" ? null : `Filters left out no story${short}` };
  const why = [...reasons].map(([reason, count]) => `${count} ${reason}`).join(", ");
  return {
    stories: kept,
    line: `Left out ${leftOut} of ${examined} front-page ${examined === 1 ? "story" : "stories"}: ${why}${short}`,
  };
}

function hostOf(url: string | null): string | null {
  if (url === null) return null;
  try {
    return new URL(url).hostname.toLowerCase().replace(/\.$/, "");
  } catch {
    return null;
  }
}
