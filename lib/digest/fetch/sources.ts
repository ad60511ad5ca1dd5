/**
 * SOURCES, the table of story sources: each one's name on the page, and its client over the
 * base URL the config gives it. A third source is one folder under fetch/ and one row here.
 */
import type { Discussion, SourceName, Story } from "../types.ts";
import { createHnSource, hnItemUrl } from "./hn/client.ts";
import { createLobstersSource } from "./lobsters/client.ts";
import type { StorySource } from "./source.ts";

export interface SourceRow {
  /** The site's name: "Hacker News". */
  label: string;
  /** Its short name before "discussion": "HN discussion". */
  short: string;
  open(bases: SourceBases): StorySource;
}

/** The base URLs of the sources, as the config holds them. */
export interface SourceBases {
  searchUrl: string;
  lobstersUrl: string;
}

export const SOURCES: Readonly<Record<SourceName, SourceRow>> = {
  hn: { label: "Hacker News", short: "HN", open: (bases) => createHnSource(bases.searchUrl) },
  lobsters: {
    label: "Lobsters",
    short: "Lobsters",
    open: (bases) => createLobstersSource(bases.lobstersUrl),
  },
};

export const SOURCE_NAMES = Object.keys(SOURCES) as SourceName[];

/** The sources a run reads, opened once: one client per source (Lobsters' requests queue in it). */
export function openSources(
  names: readonly SourceName[],
  bases: SourceBases,
): Map<SourceName, StorySource> {
  return new Map(names.map((name) => [name, SOURCES[name].open(bases)]));
}

/** A story's discussions: as its source gave them, or (a story from before sources) HN's. */
export function discussionsOf(
  story: Pick<Story, "id" | "discussions" | "points" | "numComments">,
): Discussion[] {
  return (
    story.discussions ?? [
      {
        source: "hn",
        id: story.id,
        url: hnItemUrl(story.id),
        points: story.points,
        comments: story.numComments,
      },
    ]
  );
}

/** "HN discussion", "Lobsters discussion": a discussion's link text. */
export function discussionLabel(source: SourceName): string {
  return `${SOURCES[source].short} discussion`;
}
