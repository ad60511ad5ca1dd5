/**
 * The edition's stories from every source the run reads: each source's front page (or, for a
 * catch-up, its best stories of the window), filtered, then taken in turn by rank, a link on two
 * sites kept once with both discussions.
 */
import { errorMessage } from "../../text/error-message.ts";
import type { SourceName, Story } from "../types.ts";
import { applyFilters, hitsWanted, type StoryFilter } from "./filters.ts";
import { SEARCH_PAGE_MAX } from "./hn/client.ts";
import type { CatchUpWindow, FrontPage, SourceFetchOptions, StorySource } from "./source.ts";
import { discussionsOf, SOURCES } from "./sources.ts";
import { sameLinkKey } from "./story-links.ts";

export interface EditionRequest {
  /** Stories per source. */
  limit: number;
  filter: StoryFilter;
  /** A catch-up edition's window; undefined: the front pages of now. */
  catchUp?: CatchUpWindow;
  /** Stories left out before the filters: a catch-up's stories an archive already holds. */
  exclude?: (story: Story) => boolean;
}

/** The stories, how many entries were malformed, and the lines saying what filters left out. */
export interface Edition extends FrontPage {
  lines: string[];
  /** A site that could not be read, when another could. */
  warnings: string[];
  /** Stories left out by `exclude`. */
  excluded: number;
}

export async function readEdition(
  sources: ReadonlyMap<SourceName, StorySource>,
  request: EditionRequest,
  options: SourceFetchOptions,
): Promise<Edition> {
  const asked = [...sources];
  const settled = await Promise.allSettled(
    asked.map(([, source]) =>
      request.catchUp
        ? source.since(request.catchUp, SEARCH_PAGE_MAX, options)
        : source.frontPage(hitsWanted(request.limit, request.filter), options),
    ),
  );
  // One site down costs its stories, not the edition; every site down stops the run.
  const failed = settled.find((result) => result.status === "rejected");
  if (failed && settled.every((result) => result.status === "rejected")) throw failed.reason;
  const lines: string[] = [];
  const warnings: string[] = [];
  const named: [SourceName, StorySource][] = [];
  const pages: FrontPage[] = [];
  settled.forEach((result, index) => {
    const entry = asked[index];
    if (!entry) return;
    if (result.status === "fulfilled") {
      named.push(entry);
      pages.push(result.value);
      return;
    }
    const reason = errorMessage(result.reason);
    warnings.push(
      `${SOURCES[entry[0]].label} could not be read, its stories are left out: ${reason}`,
    );
  });
  let excluded = 0;
  const ranked = pages.map((page, index) => {
    const kept = request.exclude
      ? page.stories.filter((story) => !request.exclude?.(story))
      : page.stories;
    excluded += page.stories.length - kept.length;
    const filtered = applyFilters(kept, request.filter, request.limit);
    const name = named[index]?.[0];
    if (filtered.line !== null)
      lines.push(
        named.length > 1 && name ? `${SOURCES[name].label}: ${filtered.line}` : filtered.line,
      );
    return filtered.stories;
  });
  return {
    stories: mergeDuplicates(
      interleave(ranked),
      asked.map(([name]) => name),
    ),
    malformed: pages.reduce((sum, page) => sum + page.malformed, 0),
    lines,
    warnings,
    excluded,
  };
}

/** Each source's first story, then each one's second, and so on: no source crowds out another. */
export function interleave(lists: readonly (readonly Story[])[]): Story[] {
  const out: Story[] = [];
  const longest = Math.max(0, ...lists.map((list) => list.length));
  for (let rank = 0; rank < longest; rank++) {
    for (const list of lists) {
      const story = list[rank];
      if (story) out.push(story);
    }
  }
  return out;
}

/**
 * One story per link: a link on two sites is kept at its first place, as the earlier source in the
 * run's list has it (its key stays the same from run to run), with both discussions and all of
 * their comments.
 */
export function mergeDuplicates(
  stories: readonly Story[],
  sources: readonly SourceName[],
): Story[] {
  const order: string[] = [];
  const groups = new Map<string, Story[]>();
  for (const [index, story] of stories.entries()) {
    const key = (story.url && sameLinkKey(story.url)) || `#${index}`;
    const group = groups.get(key);
    if (group) group.push(story);
    else {
      groups.set(key, [story]);
      order.push(key);
    }
  }
  return order.map((key) => {
    const group = groups.get(key) ?? [];
    const [first, ...others] = group;
    if (!first || others.length === 0) return first as Story;
    const sourceOrder = (story: Story) => sources.indexOf(story.source ?? "hn");
    const [primary = first, ...rest] = [...group].sort((a, b) => sourceOrder(a) - sourceOrder(b));
    const all = [primary, ...rest];
    return {
      ...primary,
      discussions: all.flatMap(discussionsOf),
      numComments: all.reduce((sum, story) => sum + story.numComments, 0),
      tags: [...new Set(all.flatMap((story) => story.tags ?? []))],
    };
  });
}
