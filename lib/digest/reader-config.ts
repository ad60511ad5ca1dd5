/**
 * The settings a reader chooses what to read, and where it goes, by: the front-page filters and
 * the email. Part of the digest's field table (config.ts spreads READER_FIELDS into FIELDS),
 * kept apart so it stays small.
 */
import { hostname, userInfo } from "node:os";
import { z } from "zod";
import { intInRange } from "../config/env.ts";
import { ConfigError } from "../config/errors.ts";
import type { Field } from "../config/fields.ts";
import { errorMessage } from "../text/error-message.ts";
import { type FilterEntry, parseFilterList, type StoryFilter } from "./fetch/filters.ts";
import { type EmailSettings, parseSmtpUrl, type SmtpServer } from "./render/email.ts";

export interface ReaderConfig {
  minPoints: number;
  minComments: number;
  skip: FilterEntry[];
  only: FilterEntry[];
  /** --email-to: where the digest is mailed; undefined sends no email. */
  emailTo: string[] | undefined;
  /** SMTP_URL, credentials included: never shown. */
  smtp: SmtpServer | undefined;
  emailFrom: string | undefined;
  /** The sender when no other is known: the user at this host ("ada@laptop"); none when unusable. */
  localSender?: string;
}

// An address as a mail client takes it without a display name: one @, no spaces, no
// separators or quotes that would change the header's meaning, a dot in the domain.
const ADDRESS = /^[^\s\p{Cc}@<>()[\]\\,;:"]{1,64}@(?=.{1,253}$)[a-z0-9-]+(\.[a-z0-9-]+)+$/iu;
const ADDRESS_FORM = "expected an email address such as reader@example.com";

const address = z.string().trim().regex(ADDRESS, ADDRESS_FORM);

/**
 * Recipients of one digest: each gets a message of their own (no one sees the others), so a
 * long list is a mailing list's job, not a relay's.
 */
export const MAX_RECIPIENTS = 50;

const addressList = z.string().transform((value, context) => {
  const entries = value
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
  const bad = entries.find((entry) => !ADDRESS.test(entry));
  if (entries.length === 0 || bad !== undefined) {
    const which = bad === undefined ? "" : `${JSON.stringify(bad.slice(0, 80))}: `;
    context.addIssue({ code: "custom", message: `${which}${ADDRESS_FORM}, comma-separated` });
    return z.NEVER;
  }
  // The same address twice (in any case) gets one message.
  const seen = new Set<string>();
  const unique = entries.filter((entry) => {
    const key = entry.toLowerCase();
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  if (unique.length > MAX_RECIPIENTS) {
    context.addIssue({
      code: "custom",
      message: `${unique.length} addresses: at most ${MAX_RECIPIENTS} (each gets a message of its own; use a mailing list for more)`,
    });
    return z.NEVER;
  }
  return unique;
});

const smtpUrl = z.string().transform((value, context) => {
  try {
    return parseSmtpUrl(value);
  } catch (error) {
    context.addIssue({ code: "custom", message: errorMessage(error) });
    return z.NEVER;
  }
});

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
  {
    key: "emailTo",
    env: "DIGEST_EMAIL_TO",
    flag: "email-to",
    hint: "addr,…",
    schema: addressList,
    defaultText: "no email",
    description: "also mail the digest (text and HTML) to these addresses through SMTP_URL",
  },
  {
    key: "smtp",
    env: "SMTP_URL",
    schema: smtpUrl,
    secret: true,
    defaultText: "none",
    description:
      "the mail server for --email-to: smtp://user:password@host:587 (STARTTLS when offered) or smtps://…:465, never shown",
  },
  {
    key: "emailFrom",
    env: "DIGEST_EMAIL_FROM",
    schema: address,
    defaultText: "SMTP_URL's user name when it is an address, else you@this-host",
    description: "the digest email's sender",
  },
];

/**
 * The email's settings when --email-to is given, checked together: SMTP_URL is needed, and a
 * sender: DIGEST_EMAIL_FROM, or SMTP_URL's user name when it is an address, or the user at this
 * host (a relay that needs no login). ConfigError else.
 */
export function emailSettings(config: ReaderConfig): EmailSettings | undefined {
  if (config.emailTo === undefined) return undefined;
  if (config.smtp === undefined) {
    throw new ConfigError(
      "SMTP_URL is needed with --email-to / DIGEST_EMAIL_TO: expected smtp://user:password@host:587 or smtps://user:password@host:465",
    );
  }
  const from =
    config.emailFrom ??
    (ADDRESS.test(config.smtp.user) ? config.smtp.user : undefined) ??
    config.localSender;
  if (from === undefined) {
    throw new ConfigError(
      `DIGEST_EMAIL_FROM is needed with --email-to when SMTP_URL's user name is no address and this user and host make none: ${ADDRESS_FORM}`,
    );
  }
  return { to: config.emailTo, from, smtp: config.smtp };
}

/**
 * "ada@laptop": the user (USER, LOGNAME, else the account's name) at this host, as mail tools
 * sign a message by default; undefined when either part is not fit for an address.
 */
export function localSender(
  env: Record<string, string | undefined>,
  host = hostname(),
): string | undefined {
  const user = env.USER ?? env.LOGNAME ?? accountName();
  const local = /^[a-z0-9._+-]{1,64}$/i.test(user ?? "") ? user : undefined;
  const domain = host.toLowerCase().replace(/\.$/, "");
  if (local === undefined || !/^[a-z0-9-]{1,63}(\.[a-z0-9-]{1,63})*$/.test(domain))
    return undefined;
  return `${local}@${domain}`;
}

/** The account's name; undefined where the system has none for this process (a bare uid). */
function accountName(): string | undefined {
  try {
    return userInfo().username;
  } catch {
    return undefined;
  }
}

/** The filters the config holds, as the fetch stage takes them. */
export function storyFilter(config: ReaderConfig): StoryFilter {
  return {
    minPoints: config.minPoints,
    minComments: config.minComments,
    skip: config.skip,
    only: config.only,
  };
}
