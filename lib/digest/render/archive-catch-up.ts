/**
 * A catch-up edition in the archive: its own page and JSON (`catch-up-YYYY-MM-DD.html`, named by
 * the day it was made), apart from the days, and an entry in the feed that links it.
 */

import { readdir } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "../../log.ts";
import { errorMessage } from "../../text/error-message.ts";
import type { DigestMeta, StoryDigest } from "../types.ts";
import { readArchivedDay } from "./archive-day.ts";
import { type DateOptions, isDateKey, localDateKey } from "./dates.ts";
import type { FeedEdition } from "./feed.ts";
import { htmlRenderer } from "./html.ts";
import { jsonRenderer } from "./json.ts";
import { writeFileAtomic } from "./output.ts";
import { renderRun } from "./types.ts";

export const CATCH_UP_PREFIX = "catch-up-";

/** Writes the edition's page and JSON; a second one the same day replaces the first. */
export async function writeCatchUpPage(
  dir: string,
  run: { meta: DigestMeta; stories: readonly StoryDigest[]; at: number },
  options: DateOptions,
): Promise<{ name: string }> {
  const name = `${CATCH_UP_PREFIX}${localDateKey(run.at, options)}`;
  const page = htmlRenderer({ archive: true, timeZone: options.timeZone, locale: options.locale });
  await writeFileAtomic(join(dir, `${name}.json`), renderRun(jsonRenderer(), run));
  await writeFileAtomic(join(dir, `${name}.html`), renderRun(page, run));
  return { name };
}

/** The catch-ups made in the feed's days (those after `since`, up to `until`), for its entries. */
export async function recentCatchUps(
  dir: string,
  range: { since: string; until: string },
  logger: Logger,
): Promise<FeedEdition[]> {
  const editions: FeedEdition[] = [];
  for (const file of await readdir(dir)) {
    const key = new RegExp(`^${CATCH_UP_PREFIX}(\\d{4}-\\d{2}-\\d{2})\\.json$`).exec(file)?.[1];
    if (!key || !isDateKey(key) || key <= range.since || key > range.until) continue;
    try {
      const day = await readArchivedDay(join(dir, file));
      editions.push({
        name: file.replace(/\.json$/, ""),
        generatedAt: day.generatedAt,
        hours: day.catchUp?.hours ?? 0,
        stories: day.stories,
      });
    } catch (error) {
      logger.warn(`Archive: ${file} left out of the feed: ${errorMessage(error)}`);
    }
  }
  return editions;
}
