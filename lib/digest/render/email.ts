/**
 * --email-to: the digest mailed as one multipart/alternative message, the Markdown as its plain
 * text and the self-contained HTML page (inline CSS, nothing loaded from outside) as its HTML,
 * through the SMTP server SMTP_URL names (nodemailer: STARTTLS whenever the server offers it).
 */

import { createTransport } from "nodemailer";
import { stripControl } from "../../text/control.ts";
import { errorMessage } from "../../text/error-message.ts";
import type { DigestMeta, StoryDigest } from "../types.ts";
import { type DateOptions, dayLabel, localDateKey } from "./dates.ts";
import { countText, digestTitle } from "./facts.ts";
import { htmlRenderer } from "./html.ts";
import { escapeHtml } from "./html-escape.ts";
import { markdownRenderer } from "./markdown.ts";
import { renderRun } from "./types.ts";

/** SMTP_URL taken apart; `user` and `password` are never shown. */
export interface SmtpServer {
  host: string;
  port: number;
  /** smtps://: TLS from the first byte; smtp://: STARTTLS when the server offers it. */
  secure: boolean;
  user: string;
  password: string;
}

export interface EmailSettings {
  to: string[];
  from: string;
  smtp: SmtpServer;
}

export interface DigestEmail {
  subject: string;
  text: string;
  html: string;
}

/** The mail server did not take the digest: one line naming SMTP and the host, exit 1. */
export class EmailError extends Error {
  override name = "EmailError";
}

const SMTP_FORM = "expected smtp://user:password@host:587 or smtps://user:password@host:465";

/** `smtp://user:pass@host:587` → its parts; throws with the form (never the value) when bad. */
export function parseSmtpUrl(value: string): SmtpServer {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new Error(SMTP_FORM);
  }
  const secure = url.protocol === "smtps:";
  if (!secure && url.protocol !== "smtp:") throw new Error(`${SMTP_FORM} (not ${url.protocol})`);
  if (url.hostname === "" || (url.pathname !== "" && url.pathname !== "/") || url.search !== "") {
    throw new Error(SMTP_FORM);
  }
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, "$1"),
    port: url.port === "" ? (secure ? 465 : 587) : Number(url.port),
    secure,
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
  };
}

/** "mail.example.com:587": how the server is named in messages, without its credentials. */
export function smtpName(smtp: SmtpServer): string {
  return `${smtp.host.includes(":") ? `[${smtp.host}]` : smtp.host}:${smtp.port}`;
}

/** The top headline in the subject is cut to this many characters, so the date and count show. */
const SUBJECT_HEADLINE_CHARS = 80;
/** Headlines in the preheader, the line a mail client shows beside the subject. */
const PREHEADER_HEADLINES = 3;

/**
 * The email of a run: a subject with the date, the number of stories and the top headline; the
 * Markdown as plain text; the page as HTML, opening with a hidden preheader (what a mail client
 * shows under the subject: the count, how many are new, the next headlines).
 */
export function digestEmail(
  run: { meta: DigestMeta; stories: readonly StoryDigest[] },
  options: DateOptions = {},
): DigestEmail {
  const day = localDateKey(Date.parse(run.meta.generatedAt), options);
  const titles = run.stories.map((digest) => oneLine(digest.story.title));
  const top = titles[0];
  const subject = [
    digestTitle(run.meta),
    dayLabel(day),
    countText(run.stories.length, "story", "stories"),
    top === undefined ? undefined : cut(top, SUBJECT_HEADLINE_CHARS),
  ].filter((part) => part !== undefined);
  const page = renderRun(htmlRenderer(options), run);
  return {
    subject: subject.join(" · "),
    text: renderRun(markdownRenderer(options), run),
    html: page.replace("<body>", `<body>\n${preheaderHtml(preheader(run.meta, titles))}`),
  };
}

/** "10 stories, 3 new: Second headline · Third · Fourth". */
export function preheader(meta: DigestMeta, titles: readonly string[]): string {
  const count = countText(titles.length, "story", "stories");
  const fresh = meta.newCount === null || meta.newCount === 0 ? "" : `, ${meta.newCount} new`;
  const next = titles.slice(1, 1 + PREHEADER_HEADLINES);
  return `${count}${fresh}${next.length === 0 ? "" : `: ${next.join(" · ")}`}`;
}

/** Hidden in the message, shown by mail clients as its preview; padded so no body text follows. */
function preheaderHtml(text: string): string {
  const style =
    "display:none;font-size:1px;line-height:1px;max-height:0;max-width:0;opacity:0;overflow:hidden;mso-hide:all";
  return `<div class="preheader" style="${style}" aria-hidden="true">${escapeHtml(text)}${"&#8199;&#65279;&#847; ".repeat(40)}</div>`;
}

function oneLine(text: string): string {
  return stripControl(text).replace(/\s+/g, " ").trim();
}

function cut(text: string, chars: number): string {
  const points = [...text];
  return points.length <= chars
    ? text
    : `${points
        .slice(0, chars - 1)
        .join("")
        .trimEnd()}…`;
}

/** Time allowed to connect, to be greeted, and for any one reply: a dead server is not waited on. */
const TIMEOUTS = { connectionTimeout: 15_000, greetingTimeout: 15_000, socketTimeout: 60_000 };

/**
 * Sends the email, or throws EmailError with one line naming SMTP and the host; the reason is
 * the server's or the network's, without the credentials even if a server quotes them back.
 * `tls` is for tests (a CA to trust); a real run uses the system's.
 */
export async function sendDigestEmail(
  email: DigestEmail,
  settings: EmailSettings,
  options: { tls?: { ca: string; servername?: string } } = {},
): Promise<void> {
  const { smtp } = settings;
  // One connection for every message (a pool of one), so fifty recipients are one login.
  const transport = createTransport({
    pool: true,
    maxConnections: 1,
    host: smtp.host,
    port: smtp.port,
    secure: smtp.secure,
    auth: smtp.user === "" ? undefined : { user: smtp.user, pass: smtp.password },
    tls: options.tls,
    ...TIMEOUTS,
  });
  const failed: { to: string; reason: string }[] = [];
  try {
    // A message per recipient, addressed to them alone: no one sees who else reads the digest.
    for (const to of settings.to) {
      try {
        await transport.sendMail({
          from: settings.from,
          to,
          subject: email.subject,
          text: email.text,
          html: email.html,
        });
      } catch (error) {
        failed.push({ to, reason: withoutSecrets(errorMessage(error), smtp) });
        // The server itself is unreachable or refused the login: the others would fail alike.
        if (failed.length === 1 && isServerFailure(error)) break;
      }
    }
  } finally {
    transport.close();
  }
  const [first] = failed;
  if (first === undefined) return;
  const server = `SMTP server ${smtpName(smtp)} failed`;
  const sent = settings.to.length - failed.length;
  if (sent === 0 || failed.length === settings.to.length) {
    throw new EmailError(`Email not sent: ${server}: ${first.reason}`);
  }
  throw new EmailError(
    `Email sent to ${sent} of ${settings.to.length} recipients: ${server} for ${listText(failed.map((f) => f.to))}: ${first.reason}`,
  );
}

/** A failure that is the server's or the connection's (not one recipient's): nodemailer's codes. */
function isServerFailure(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return (
    typeof code === "string" &&
    ["ECONNECTION", "ETIMEDOUT", "ESOCKET", "EAUTH", "ETLS", "EDNS"].includes(code)
  );
}

/** "a@x, b@y and 3 more". */
export function listText(items: readonly string[], shown = 3): string {
  const head = items.slice(0, shown).join(", ");
  return items.length > shown ? `${head} and ${items.length - shown} more` : head;
}

function withoutSecrets(message: string, smtp: SmtpServer): string {
  let text = stripControl(message).replace(/\s+/g, " ").trim();
  // As typed, and as AUTH PLAIN sends them, should a server quote its exchange back.
  const plain = Buffer.from(`\u0000${smtp.user}\u0000${smtp.password}`).toString("base64");
  for (const secret of [plain, smtp.password, smtp.user]) {
    if (secret.length >= 3) text = text.split(secret).join("[SMTP_URL credentials]");
  }
  return text.slice(0, 300);
}
