/**
 * The settings that choose what an edition holds: the sources it reads (--source, LOBSTERS_URL)
 * and, for a catch-up edition, the days it looks back over (--since, --days). Part of the
 * digest's field table (config.ts spreads EDITION_FIELDS into FIELDS), kept apart so it stays small.
 */
import parseDuration from "parse-duration";
import { z } from "zod";
import { httpUrl, intInRange } from "../config/env.ts";
import { ConfigError } from "../config/errors.ts";
import type { Field } from "../config/fields.ts";
import { SOURCE_NAMES } from "./fetch/sources.ts";
import type { SourceName } from "./types.ts";

export interface EditionConfig {
  /** The sources read, in the order given (the first one's story wins a link on two sites). */
  sources: SourceName[];
  lobstersUrl: string;
  /** --since: a catch-up edition of this many past ms; undefined: the front page of now. */
  since: number | undefined;
  /** --days: the same in days. */
  days: number | undefined;
}

export const DEFAULT_LOBSTERS_URL = "https://lobste.rs";
/** The longest catch-up: the search API keeps everything, but a month is past any reader's week. */
export const MAX_CATCH_UP_DAYS = 31;
const DAY_MS = 86_400_000;

const sourceList = z.string().transform((value, context) => {
  const names = value
    .split(",")
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== "");
  const bad = names.find((name) => !(SOURCE_NAMES as string[]).includes(name));
  if (names.length === 0 || bad !== undefined) {
    const which = bad === undefined ? "" : `${JSON.stringify(bad.slice(0, 40))}: `;
    context.addIssue({
      code: "custom",
      message: `${which}expected a comma-separated list of ${SOURCE_NAMES.join(", ")}`,
    });
    return z.NEVER;
  }
  return [...new Set(names)] as SourceName[];
});

/** `7d`, `36h`, `2w`: a catch-up's reach, from an hour to a month. */
const catchUpDuration = z.string().transform((value, context) => {
  const text = value.trim();
  const ms = /[a-z]/i.test(text) ? parseDuration(text) : null;
  if (
    ms === null ||
    ms === undefined ||
    !Number.isFinite(ms) ||
    ms < 3_600_000 ||
    ms > MAX_CATCH_UP_DAYS * DAY_MS
  ) {
    context.addIssue({
      code: "custom",
      message: `expected a duration such as 7d, 36h or 2w (at least 1h, at most ${MAX_CATCH_UP_DAYS}d)`,
    });
    return z.NEVER;
  }
  return Math.round(ms);
});

export const EDITION_FIELDS: readonly Field<keyof EditionConfig>[] = [
  {
    key: "sources",
    env: "DIGEST_SOURCES",
    flag: "source",
    hint: SOURCE_NAMES.join(","),
    schema: sourceList,
    default: () => ["hn"],
    defaultText: "hn",
    description:
      "where the stories come from: hn, lobsters or both (hn,lobsters); --limit stories from each, a link on both shown once with both discussions",
  },
  {
    key: "lobstersUrl",
    env: "LOBSTERS_URL",
    flag: "lobsters-url",
    hint: "url",
    schema: httpUrl(DEFAULT_LOBSTERS_URL),
    default: DEFAULT_LOBSTERS_URL,
    description: "Lobsters base URL (its /hottest.json and /s/ID.json)",
  },
  {
    key: "since",
    flag: "since",
    hint: "duration",
    schema: catchUpDuration,
    defaultText: "none: today's front page",
    description:
      "a catch-up edition: the best stories posted in this past time (7d, 36h), less those the --archive already summarised",
  },
  {
    key: "days",
    flag: "days",
    hint: "n",
    schema: intInRange(1, MAX_CATCH_UP_DAYS),
    defaultText: "none",
    description: "the same as --since Nd",
  },
];

/** A catch-up edition's reach in ms, or undefined for today's front page; --since and --days clash. */
export function catchUpMs(config: Pick<EditionConfig, "since" | "days">): number | undefined {
  if (config.since !== undefined && config.days !== undefined) {
    throw new ConfigError("--since and --days say the same thing: give one of them");
  }
  return config.days === undefined ? config.since : config.days * DAY_MS;
}
