import { createHash } from "node:crypto";
import { access, constants, mkdir, readdir, realpath, stat } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { UsageError } from "../../config/errors.ts";
import type { Logger } from "../../log.ts";
import { errorMessage } from "../../text/error-message.ts";
import type { DigestMeta, StoryDigest } from "../types.ts";
import { archiveIndexHtml } from "./archive-index.ts";
import { type DateOptions, daysBefore, isDateKey, localDateKey } from "./dates.ts";
import { atomFeed, type FeedDay } from "./feed.ts";
import { htmlRenderer } from "./html.ts";
import { jsonRenderer } from "./json.ts";
import { removeStaleTemporaries, writeFileAtomic } from "./output.ts";
import type { Renderer } from "./types.ts";

/** Days the feed covers, today included. */
export const FEED_DAYS = 7;
/** A day's JSON larger than this is not one of ours: skipped, never read into memory. */
const MAX_DAY_BYTES = 16 * 1024 * 1024;

export interface ArchivedRun {
  meta: DigestMeta;
  /** In front-page order. */
  stories: readonly StoryDigest[];
  /** When the run started (ms): its local calendar day names the page. */
  at: number;
}

export interface Archive {
  /**
   * Writes the run's day (`YYYY-MM-DD.html` and `.json`, replacing that day's earlier run),
   * then `index.html` and `feed.xml` anew. Each file is replaced atomically.
   */
  write(run: ArchivedRun, options: DateOptions & { logger: Logger }): Promise<{ day: string }>;
}

/**
 * Opens the archive folder, creating it when missing, before any network call, so a path that
 * cannot be written fails at once (UsageError, exit 2) rather than after the summaries.
 */
export async function openArchive(dir: string): Promise<Archive> {
  try {
    await mkdir(dir, { recursive: true });
    await access(dir, constants.W_OK);
    if (!(await stat(dir)).isDirectory()) throw new Error("not a folder");
  } catch (error) {
    throw new UsageError(
      `Archive folder ${dir} (--archive / DIGEST_ARCHIVE) cannot be written: ${errorMessage(error)}`,
    );
  }
  // A run killed while it replaced a file left its hidden temporary file behind.
  await removeStaleTemporaries(dir);
  return {
    async write(run, options) {
      try {
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
  const before = known.filter((key) => key < day).sort();
  await writeFileAtomic(join(dir, `${day}.json`), render(jsonRenderer(), run));
  const page = htmlRenderer({
    archive: true,
    timeZone: options.timeZone,
    previousDay: before.at(-1),
  });
  await writeFileAtomic(join(dir, `${day}.html`), render(page, run));
  // The folder once: the page just written added today, if it was not there already.
  const days = known.includes(day) ? known : [...known, day];
  await writeFileAtomic(join(dir, "index.html"), archiveIndexHtml(days));
  const recent = days.filter((key) => key > daysBefore(day, FEED_DAYS) && key <= day);
  const feedDays = await readDays(dir, recent, options.logger);
  await writeFileAtomic(join(dir, "feed.xml"), atomFeed(feedDays, { id: await feedId(dir) }));
  return { day };
}

function render(renderer: Renderer, run: ArchivedRun): string {
  return [
    renderer.begin(run.meta),
    ...run.stories.map((story, index) => renderer.story(story, index)),
    renderer.end(),
  ].join("");
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

const daySchema = z.object({
  generatedAt: z.iso.datetime(),
  model: z.string(),
  stories: z.array(
    z.object({
      id: z.number().int().positive(),
      title: z.string(),
      url: z.string().nullable(),
      site: z.string().nullable(),
      points: z.number(),
      numComments: z.number(),
      articleWords: z.number().nullable().optional(),
      articleSummary: z.string().nullable(),
      articleSource: z.enum(["article", "post", "article and post", "description"]).nullable(),
      discussionSummary: z.string().nullable(),
    }),
  ),
});

/** The days' JSON read back for the feed; a missing, oversized or malformed one is skipped. */
async function readDays(dir: string, keys: readonly string[], logger: Logger): Promise<FeedDay[]> {
  const days: FeedDay[] = [];
  for (const key of keys) {
    const path = join(dir, `${key}.json`);
    try {
      const file = Bun.file(path);
      if (file.size > MAX_DAY_BYTES) throw new Error(`larger than ${MAX_DAY_BYTES} bytes`);
      const parsed = daySchema.safeParse(JSON.parse(await file.text()));
      if (!parsed.success) throw new Error(z.prettifyError(parsed.error).split("\n")[0]);
      days.push({ key, ...parsed.data });
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
