import { createHash } from "node:crypto";
import { access, constants, mkdir, readdir, realpath, stat } from "node:fs/promises";
import { join } from "node:path";
import { UsageError } from "../../config/errors.ts";
import { UnsafeTarget, writeFolder } from "../../files/write-target.ts";
import type { Logger } from "../../log.ts";
import { errorMessage } from "../../text/error-message.ts";
import type { DigestMeta, StoryDigest } from "../types.ts";
import { recentCatchUps, writeCatchUpPage } from "./archive-catch-up.ts";
import {
  type ArchivedDay,
  archivedDigest,
  archivedMeta,
  mergeDay,
  mergedMeta,
  readArchivedDay,
} from "./archive-day.ts";
import { archiveIndexHtml, indexDay, indexJson, readIndexDays } from "./archive-index.ts";
import { type DateOptions, daysBefore, isDateKey, localDateKey } from "./dates.ts";
import { atomFeed, type FeedDay } from "./feed.ts";
import { htmlRenderer } from "./html.ts";
import { jsonRenderer } from "./json.ts";
import { removeStaleTemporaries, writeFileAtomic } from "./output.ts";
import { renderRun } from "./types.ts";

/** Days the feed covers, today included. */
export const FEED_DAYS = 7;

export interface ArchivedRun {
  meta: DigestMeta;
  /** In front-page order. */
  stories: readonly StoryDigest[];
  /** When the run started (ms): its local calendar day names the page. */
  at: number;
}

export interface Archive {
  /**
   * Writes the run's day (`YYYY-MM-DD.html` and `.json`; a second run the same day keeps the
   * stories the first showed, under "Earlier today"), links the neighbouring days' pages to a
   * new day, then writes `index.json`, `index.html` and `feed.xml` anew. Each file is replaced
   * atomically.
   */
  write(run: ArchivedRun, options: DateOptions & { logger: Logger }): Promise<{ day: string }>;
}

/**
 * Opens the archive folder, creating it when missing, before any network call, so a path that
 * cannot be written fails at once (UsageError, exit 2) rather than after the summaries. A folder
 * in /dev, /proc or /sys is refused; a file in it that is a symlink is followed to a regular
 * file or refused, never replaced (writeFileAtomic).
 */
export async function openArchive(dir: string): Promise<Archive> {
  try {
    // Not in /dev, /proc or /sys (not even made there); each file is checked as it is written.
    writeFolder(dir);
    await mkdir(dir, { recursive: true });
    await access(dir, constants.W_OK);
    if (!(await stat(dir)).isDirectory()) throw new Error("not a folder");
  } catch (error) {
    const why =
      error instanceof UnsafeTarget ? error.message : `cannot be written: ${errorMessage(error)}`;
    throw new UsageError(`Archive folder ${dir} (--archive / DIGEST_ARCHIVE) ${why}`);
  }
  // A run killed while it replaced a file left its hidden temporary file behind.
  await removeStaleTemporaries(dir);
  return {
    async write(run, options) {
      try {
        if (run.meta.catchUp) return await writeCatchUp(dir, run, options);
        return await writeDay(dir, run, options);
      } catch (error) {
        throw new Error(`Archive folder ${dir} could not be written: ${errorMessage(error)}`);
      }
    },
  };
}

async function writeDay(
  dir: string,
  run: ArchivedRun,
  options: DateOptions & { logger: Logger },
): Promise<{ day: string }> {
  const day = localDateKey(run.at, options);
  const known = await archivedDays(dir);
  const isNewDay = !known.includes(day);
  const days = isNewDay ? [...known, day].sort() : known.sort();
  // A second run the same day adds to the day: what the morning showed stays.
  const earlier = isNewDay ? null : await readEarlier(dir, day, options.logger);
  const stories = mergeDay(run.stories, earlier?.stories.map(archivedDigest) ?? []);
  const meta = mergedMeta(run.meta, earlier, stories);
  await writeFileAtomic(join(dir, `${day}.json`), renderRun(jsonRenderer(), { meta, stories }));
  await writePage(dir, day, { meta, stories }, days, options);
  if (isNewDay) {
    // The neighbours' pages gain their link to this day (the day before: "next").
    for (const neighbour of [neighbours(days, day).previous, neighbours(days, day).next]) {
      if (neighbour !== undefined) await rewritePage(dir, neighbour, days, options);
    }
  }
  const index = await readIndexDays(dir, days, options.logger);
  index.set(day, indexDay({ stories: stories.map((digest) => digest.story) }));
  await writeFileAtomic(join(dir, "index.json"), indexJson(index));
  await writeFileAtomic(join(dir, "index.html"), archiveIndexHtml(index));
  await writeFeed(dir, day, days, options.logger);
  return { day };
}

/**
 * A catch-up edition: its own page and JSON (the days' pages and index stay as they are), and
 * the feed written anew with an entry for it. `day` is the page's name, `catch-up-YYYY-MM-DD`.
 */
async function writeCatchUp(
  dir: string,
  run: ArchivedRun,
  options: DateOptions & { logger: Logger },
): Promise<{ day: string }> {
  const { name } = await writeCatchUpPage(dir, run, options);
  await writeFeed(dir, localDateKey(run.at, options), await archivedDays(dir), options.logger);
  return { day: name };
}

/** The feed of the last FEED_DAYS days up to `day`: their stories and the catch-ups made then. */
async function writeFeed(
  dir: string,
  day: string,
  days: readonly string[],
  logger: Logger,
): Promise<void> {
  const since = daysBefore(day, FEED_DAYS);
  const recent = days.filter((key) => key > since && key <= day);
  const feedDays = await readDays(dir, recent, logger);
  const editions = await recentCatchUps(dir, { since, until: day }, logger);
  await writeFileAtomic(
    join(dir, "feed.xml"),
    atomFeed(feedDays, { id: await feedId(dir), editions }),
  );
}

function neighbours(days: readonly string[], day: string) {
  return {
    previous: days.filter((key) => key < day).at(-1),
    next: days.find((key) => key > day),
  };
}

async function writePage(
  dir: string,
  day: string,
  content: { meta: DigestMeta; stories: readonly StoryDigest[] },
  days: readonly string[],
  options: DateOptions,
): Promise<void> {
  const { previous, next } = neighbours(days, day);
  const page = htmlRenderer({
    archive: true,
    timeZone: options.timeZone,
    locale: options.locale,
    previousDay: previous,
    nextDay: next,
  });
  await writeFileAtomic(join(dir, `${day}.html`), renderRun(page, content));
}

/** Writes an earlier day's page again from its JSON, with today's neighbours linked. */
async function rewritePage(
  dir: string,
  day: string,
  days: readonly string[],
  options: DateOptions & { logger: Logger },
): Promise<void> {
  try {
    const archived = await readArchivedDay(join(dir, `${day}.json`));
    const stories = archived.stories.map(archivedDigest);
    await writePage(dir, day, { meta: archivedMeta(archived), stories }, days, options);
  } catch (error) {
    options.logger.warn(
      `Archive: ${day}.html keeps its links as they were: ${day}.json cannot be read: ${errorMessage(error)}`,
    );
  }
}

/** The day as its earlier run wrote it; null (and a warning) when unreadable. */
async function readEarlier(dir: string, day: string, logger: Logger): Promise<ArchivedDay | null> {
  const path = join(dir, `${day}.json`);
  if (!(await Bun.file(path).exists())) return null;
  try {
    return await readArchivedDay(path);
  } catch (error) {
    logger.warn(`Archive: ${path} is replaced, its stories not kept: ${errorMessage(error)}`);
    return null;
  }
}

/** The days with a page in the folder ("2026-11-25"), in any order. */
async function archivedDays(dir: string): Promise<string[]> {
  const days: string[] = [];
  for (const name of await readdir(dir)) {
    const key = /^(\d{4}-\d{2}-\d{2})\.html$/.exec(name)?.[1];
    if (key && isDateKey(key)) days.push(key);
  }
  return days;
}

/** The days' JSON read back for the feed; a missing, oversized or malformed one is skipped. */
async function readDays(dir: string, keys: readonly string[], logger: Logger): Promise<FeedDay[]> {
  const days: FeedDay[] = [];
  for (const key of keys) {
    const path = join(dir, `${key}.json`);
    try {
      const { generatedAt, model, stories } = await readArchivedDay(path);
      days.push({ key, generatedAt, model, stories });
    } catch (error) {
      logger.warn(`Archive: ${path} left out of the feed: ${errorMessage(error)}`);
    }
  }
  return days;
}

/**
 * The feed's permanent id (Atom wants an absolute IRI): a UUID made from the folder's real
 * path, so it stays the same from run to run without a file to keep it in.
 */
async function feedId(dir: string): Promise<string> {
  const hex = createHash("sha256")
    .update(await realpath(dir))
    .digest("hex");
  return `urn:uuid:${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
