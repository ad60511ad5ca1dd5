/**
 * A catch-up edition (--since 7d, --days N): the best stories posted in the window, less those
 * the archive already summarised (its days' and earlier catch-ups' JSON), so a reader back from
 * a week away reads what they missed and nothing twice.
 */
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "../log.ts";
import { errorMessage } from "../text/error-message.ts";
import type { DigestConfig } from "./config.ts";
import { catchUpMs } from "./edition-config.ts";
import type { CatchUpWindow } from "./fetch/source.ts";
import { readArchivedDay } from "./render/archive-day.ts";
import { localDateKey } from "./render/dates.ts";
import type { CatchUp, DigestMeta, SourceName, Story } from "./types.ts";

/**
 * The fewest points a catch-up's story needs (or --min-points, when higher): the search API's
 * largest page holds a week of stories over it, and the best of a week are far over it.
 */
export const CATCH_UP_MIN_POINTS = 100;

export interface CatchUpPlan {
  window: CatchUpWindow;
  /** A story the archive already summarised. */
  exclude: (story: Story) => boolean;
  /** Stories `exclude` left out, counted as it runs. */
  skipped: () => number;
  meta: (skipped: number) => CatchUp;
}

/** The catch-up the config asks for, or undefined for the front page of now. */
export async function planCatchUp(
  config: Pick<DigestConfig, "since" | "days" | "minPoints" | "archive">,
  at: { now: number; logger: Logger; timeZone?: string },
): Promise<CatchUpPlan | undefined> {
  const ms = catchUpMs(config);
  if (ms === undefined) return undefined;
  const from = at.now - ms;
  const summarised =
    config.archive === undefined
      ? new Set<string>()
      : await archivedIds(config.archive, from, {
          logger: at.logger,
          // Today's catch-up is the one this run replaces: its stories are not skipped.
          replacing: `catch-up-${localDateKey(at.now, { timeZone: at.timeZone })}.json`,
        });
  let skipped = 0;
  return {
    window: {
      from: Math.floor(from / 1000),
      // Seconds are whole: a story posted this very second is in.
      to: Math.floor(at.now / 1000) + 1,
      minPoints: Math.max(config.minPoints, CATCH_UP_MIN_POINTS),
    },
    exclude(story) {
      const known = summarised.has(String(story.id));
      if (known) skipped++;
      return known;
    },
    skipped: () => skipped,
    meta: (count) => ({
      from: new Date(from).toISOString(),
      hours: Math.round(ms / 3_600_000),
      skipped: count,
    }),
  };
}

/**
 * The keys of the stories the archive holds a summary of, from the pages of the window's days
 * (and the day before it, whose evening may hold the window's first stories) and its catch-ups.
 */
export async function archivedIds(
  dir: string,
  from: number,
  options: { logger: Logger; replacing?: string },
): Promise<Set<string>> {
  const first = new Date(from - 86_400_000).toISOString().slice(0, 10);
  const ids = new Set<string>();
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return ids;
  }
  for (const name of names) {
    const day = /^(?:catch-up-)?(\d{4}-\d{2}-\d{2})\.json$/.exec(name)?.[1];
    if (!day || day < first || name === options.replacing) continue;
    try {
      for (const story of (await readArchivedDay(join(dir, name))).stories) {
        if (story.articleSummary !== null || story.discussionSummary !== null)
          ids.add(String(story.id));
      }
    } catch (error) {
      options.logger.warn(`Archive: ${name} is not read for the catch-up: ${errorMessage(error)}`);
    }
  }
  return ids;
}

/** What the digest's header says of the edition: the sites read, and the catch-up's reach. */
export function editionMeta(
  sources: readonly SourceName[],
  catchUp: CatchUpPlan | undefined,
): Pick<DigestMeta, "sources" | "catchUp"> {
  return {
    sources: [...sources],
    ...(catchUp ? { catchUp: catchUp.meta(catchUp.skipped()) } : {}),
  };
}
