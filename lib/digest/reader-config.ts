/**
 * The settings a reader chooses what to read by: the front-page filters. Part of the digest's
 * field table (config.ts spreads READER_FIELDS into FIELDS), kept apart so it stays small.
 */
import { z } from "zod";
import { intInRange } from "../config/env.ts";
import type { Field } from "../config/fields.ts";
import { errorMessage } from "../text/error-message.ts";
import { type FilterEntry, parseFilterList, type StoryFilter } from "./fetch/filters.ts";

export interface ReaderConfig {
  minPoints: number;
  minComments: number;
  skip: FilterEntry[];
  only: FilterEntry[];
}

const filterList = z.string().transform((value, context) => {
  try {
    return parseFilterList(value);
  } catch (error) {
    context.addIssue({ code: "custom", message: errorMessage(error) });
    return z.NEVER;
  }
});

const LIST_FORM =
  "comma-separated: a word matches the title as a whole word (any case), an entry with a dot the link's host and its subdomains";

export const READER_FIELDS: readonly Field<keyof ReaderConfig>[] = [
  {
    key: "minPoints",
    env: "DIGEST_MIN_POINTS",
    flag: "min-points",
    hint: "n",
    schema: intInRange(0, 1_000_000),
    default: 0,
    description: "leave out stories with fewer points",
  },
  {
    key: "minComments",
    env: "DIGEST_MIN_COMMENTS",
    flag: "min-comments",
    hint: "n",
    schema: intInRange(0, 1_000_000),
    default: 0,
    description: "leave out stories with fewer comments",
  },
  {
    key: "skip",
    env: "DIGEST_SKIP",
    flag: "skip",
    hint: "list",
    schema: filterList,
    default: () => [],
    defaultText: "none",
    description: `leave out stories matching any entry (${LIST_FORM})`,
  },
  {
    key: "only",
    env: "DIGEST_ONLY",
    flag: "only",
    hint: "list",
    schema: filterList,
    default: () => [],
    defaultText: "all",
    description: "keep only stories matching an entry (same form as --skip)",
  },
];

/** The filters the config holds, as the fetch stage takes them. */
export function storyFilter(config: ReaderConfig): StoryFilter {
  return {
    minPoints: config.minPoints,
    minComments: config.minComments,
    skip: config.skip,
    only: config.only,
  };
}
