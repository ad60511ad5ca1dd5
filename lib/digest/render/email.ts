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
import { htmlRenderer } from "./html.ts";
import { markdownRenderer } from "./markdown.ts";
import type { Renderer } from "./types.ts";

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

/** The email of a run: dated subject, the Markdown as plain text, the page as HTML. */
export function digestEmail(
  run: { meta: DigestMeta; stories: readonly StoryDigest[] },
  options: DateOptions = {},
): DigestEmail {
  const day = localDateKey(Date.parse(run.meta.generatedAt), options);
  return {
    subject: `Hacker News digest · ${dayLabel(day)}`,
    text: renderAll(markdownRenderer(options), run),
    html: renderAll(htmlRenderer(options), run),
  };
}

function renderAll(
  renderer: Renderer,
  run: { meta: DigestMeta; stories: readonly StoryDigest[] },
): string {
  return [
    renderer.begin(run.meta),
    ...run.stories.map((story, index) => renderer.story(story, index)),
    renderer.end(),
  ].join("");
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
  const transport = createTransport({
    host: smtp.host,
    port: smtp.port,
    secure: smtp.secure,
    auth: smtp.user === "" ? undefined : { user: smtp.user, pass: smtp.password },
    tls: options.tls,
    ...TIMEOUTS,
  });
  try {
    await transport.sendMail({
      from: settings.from,
      to: settings.to,
      subject: email.subject,
      text: email.text,
      html: email.html,
    });
  } catch (error) {
    throw new EmailError(
      `Email not sent: SMTP server ${smtpName(smtp)} failed: ${withoutSecrets(errorMessage(error), smtp)}`,
    );
  } finally {
    transport.close();
  }
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
