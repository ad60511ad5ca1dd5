import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { parseHTML } from "linkedom";
import { simpleParser } from "mailparser";
import { ConfigError } from "../../lib/config/errors.ts";
import { EmailError } from "../../lib/digest/render/email.ts";
import { articleHtml } from "../fakes/article-site.ts";
import { runDigestCommand } from "../fakes/digest-run.ts";
import { startDigestWorld } from "../fakes/digest-world.ts";
import { commentHit, storyHit } from "../fakes/hn-search.ts";
import { closedPort, startFakeSmtp } from "../fakes/smtp.ts";
import { tempDirs } from "../fakes/temp-dirs.ts";

setDefaultTimeout(30_000);

const tempDir = tempDirs("digest-email-");
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

// A password with characters a URL must escape, so SMTP_URL's decoding is exercised too.
const USER = "digest@example.com";
const PASSWORD = "s3cret pass/word";
const smtpUrl = (port: number, scheme = "smtp", password = PASSWORD) =>
  `${scheme}://${encodeURIComponent(USER)}:${encodeURIComponent(password)}@127.0.0.1:${port}`;

const TITLES = [
  "A tiny database in Rust",
  "Ask HN: What are you reading?",
  "Show HN: <img src=x> & co",
];

function stories() {
  return [
    storyHit({
      objectID: "501",
      story_id: 501,
      title: TITLES[0],
      url: "/story/501",
      num_comments: 1,
    }),
    storyHit({
      objectID: "502",
      story_id: 502,
      title: TITLES[1],
      url: undefined,
      story_text: "What books this summer?",
      num_comments: 0,
    }),
    storyHit({
      objectID: "503",
      story_id: 503,
      title: TITLES[2],
      url: "/story/503",
      num_comments: 0,
    }),
  ];
}

function world() {
  return startDigestWorld({
    stories: stories(),
    comments: { 501: [commentHit(501, { comment_text: "Rust is nice." })] },
    pages: {
      "/story/501": { body: articleHtml("A tiny database", ["It stores rows. ".repeat(60)]) },
      "/story/503": { body: articleHtml("A demo", ["It shows things. ".repeat(60)]) },
    },
  });
}

async function digest(
  fakes: ReturnType<typeof world>,
  rawArgs: string[],
  env: Record<string, string>,
  smtpTls?: { ca: string; servername?: string },
) {
  return runDigestCommand({ ...fakes.env, XDG_CACHE_HOME: tempDir(), ...env }, rawArgs, {
    at: Date.parse("2026-11-27T07:30:00Z"),
    deps: { smtpTls },
  });
}

/**
 * What the HTML part may point at: nothing it would load (no src, srcset, poster, background,
 * <link>, <base>, <form>, CSS url() or @import; no element but <a> with an href), and only
 * links a reader clicks: the page's own #fragments, the stories' links and HN discussions.
 */
function outsideReferences(html: string, allowedLinks: Set<string>): string[] {
  const { document } = parseHTML(html);
  const found: string[] = [];
  for (const element of document.querySelectorAll("*")) {
    const tag = element.tagName.toLowerCase();
    if (
      [
        "script",
        "img",
        "iframe",
        "object",
        "embed",
        "link",
        "base",
        "form",
        "video",
        "audio",
        "source",
      ].includes(tag)
    ) {
      found.push(`<${tag}>`);
    }
    for (const name of element.getAttributeNames()) {
      const value = element.getAttribute(name) ?? "";
      if (name === "href") {
        if (tag !== "a") found.push(`<${tag} href>`);
        else if (!value.startsWith("#") && !allowedLinks.has(value)) found.push(value);
      } else if (/^(src|srcset|poster|background|action|formaction|data|xlink:href)$/.test(name)) {
        found.push(`${name}=${value}`);
      } else if (name === "style" && /url\(|@import/i.test(value)) {
        found.push(`style=${value}`);
      }
    }
  }
  for (const style of document.querySelectorAll("style")) {
    if (/url\(|@import/i.test(style.textContent ?? "")) found.push("CSS url() or @import");
  }
  return found;
}

describe("bun run digest --email-to", () => {
  test("a multipart/alternative message to each reader alone: subject with date, count and headline, preheader, text and self-contained HTML", async () => {
    const smtp = await startFakeSmtp({ user: USER, password: PASSWORD });
    cleanups.push(smtp.stop);
    using fakes = world();
    const { error, logger } = await digest(
      fakes,
      ["--email-to", "ada@example.com, bob@example.org"],
      {
        SMTP_URL: smtpUrl(smtp.port),
      },
    );
    expect(error).toBeUndefined();
    // A message each, addressed to its reader alone: no one sees who else reads it.
    expect(smtp.mails.map((mail) => mail.to)).toEqual([["ada@example.com"], ["bob@example.org"]]);
    for (const [i, received] of smtp.mails.entries()) {
      const headers = await simpleParser(received.raw);
      expect(headers.to).toMatchObject({ text: ["ada@example.com", "bob@example.org"][i] });
      expect(headers.cc).toBeUndefined();
      expect(headers.bcc).toBeUndefined();
    }
    const [mail] = smtp.mails;
    if (!mail) throw new Error("no mail");
    // The sender defaults to SMTP_URL's user name, an address.
    expect(mail.from).toBe(USER);
    expect(mail.user).toBe(USER);

    const parsed = await simpleParser(mail.raw);
    // The date, the number of stories and the top headline.
    expect(parsed.subject).toBe(
      "Hacker News digest · Friday 27 November 2026 · 3 stories · A tiny database in Rust",
    );
    expect(parsed.headers.get("content-type")).toMatchObject({ value: "multipart/alternative" });
    expect(parsed.attachments).toEqual([]);
    const text = parsed.text ?? "";
    const html = typeof parsed.html === "string" ? parsed.html : "";
    expect(text).toStartWith("# Hacker News digest");
    expect(html).toStartWith("<!doctype html>");
    for (const title of TITLES) {
      expect(text).toContain(title.replace("<img src=x>", "\\<img src=x\\>"));
      expect(html).toContain(
        title.replace("<img src=x>", "&#60;img src=x&#62;").replace(" & ", " &#38; "),
      );
    }
    expect(text).toContain("Summary of the article of A tiny database in Rust.");
    // The preheader: hidden, first in the body, what a mail client previews under the subject.
    const { document } = parseHTML(html);
    const preheader = document.querySelector("body > .preheader");
    expect(document.body.firstElementChild).toBe(preheader);
    expect(preheader?.getAttribute("style")).toContain("display:none");
    expect(preheader?.textContent?.trim()).toStartWith(
      "3 stories: Ask HN: What are you reading? · Show HN: <img src=x> & co",
    );

    const links = new Set([
      `${fakes.site.url}/story/501`,
      `${fakes.site.url}/story/503`,
      ...[501, 502, 503].map((id) => `https://news.ycombinator.com/item?id=${id}`),
    ]);
    expect(outsideReferences(html, links)).toEqual([]);
    // The check itself sees what it must refuse.
    expect(
      outsideReferences(
        '<a href="https://tracker.example/p.gif">x</a><p style="background:url(x)">',
        links,
      ),
    ).toEqual(["https://tracker.example/p.gif", "style=background:url(x)"]);
    expect(logger.lines).toContain(
      `info Emailed to ada@example.com, bob@example.org, a message each, from ${USER} through 127.0.0.1:${smtp.port}`,
    );
  });

  test("STARTTLS when the server offers it; DIGEST_EMAIL_FROM names the sender", async () => {
    const smtp = await startFakeSmtp({ user: USER, password: PASSWORD, starttls: true });
    cleanups.push(smtp.stop);
    using fakes = world();
    const { error } = await digest(
      fakes,
      [],
      {
        SMTP_URL: smtpUrl(smtp.port),
        DIGEST_EMAIL_TO: "ada@example.com",
        DIGEST_EMAIL_FROM: "hn@example.net",
      },
      { ca: smtp.cert, servername: "hook.test" },
    );
    expect(error).toBeUndefined();
    expect(smtp.mails.map(({ secure, from, to }) => ({ secure, from, to }))).toEqual([
      { secure: true, from: "hn@example.net", to: ["ada@example.com"] },
    ]);
  });

  test("SMTP down: one line naming SMTP and its host, exit 1, --out and the archive written", async () => {
    const port = await closedPort();
    using fakes = world();
    const dir = tempDir();
    const out = join(dir, "digest.md");
    const archive = join(dir, "archive");
    const { error, logger } = await digest(
      fakes,
      ["--email-to", "ada@example.com", "--out", out, "--archive", archive],
      { SMTP_URL: smtpUrl(port) },
    );
    expect(error).toBeInstanceOf(EmailError);
    const message = (error as Error).message;
    expect(message).toStartWith(`Email not sent: SMTP server 127.0.0.1:${port} failed: `);
    expect(message).toContain("ECONNREFUSED");
    expect(message).not.toContain("\n");
    expect(readFileSync(out, "utf8")).toContain("A tiny database in Rust");
    expect(existsSync(join(archive, "2026-11-27.html"))).toBe(true);
    expect(existsSync(join(archive, "feed.xml"))).toBe(true);
    for (const line of [message, ...logger.lines]) {
      expect(line).not.toContain("s3cret");
      expect(line).not.toContain(encodeURIComponent(PASSWORD));
    }
  });

  test("a refused password is reported without it", async () => {
    const smtp = await startFakeSmtp({ user: USER, password: PASSWORD });
    cleanups.push(smtp.stop);
    using fakes = world();
    const wrong = "wrong-s3cret";
    const { error, logger } = await digest(fakes, ["--email-to", "ada@example.com"], {
      SMTP_URL: smtpUrl(smtp.port, "smtp", wrong),
    });
    expect(error).toBeInstanceOf(EmailError);
    expect((error as Error).message).toStartWith(
      `Email not sent: SMTP server 127.0.0.1:${smtp.port} failed: `,
    );
    expect((error as Error).message).toContain("Invalid username or password");
    for (const line of [(error as Error).message, ...logger.lines])
      expect(line).not.toContain(wrong);
    expect(smtp.mails).toEqual([]);
  });

  test("a relay that needs no login and no sender given: the user at this host signs it", async () => {
    const smtp = await startFakeSmtp({});
    cleanups.push(smtp.stop);
    using fakes = world();
    const { error } = await digest(fakes, ["--email-to", "ada@example.com"], {
      SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
      USER: "reader",
    });
    expect(error).toBeUndefined();
    const sender = `reader@${hostname().toLowerCase().replace(/\.$/, "")}`;
    expect(smtp.mails.map(({ from, user }) => ({ from, user }))).toEqual([
      { from: sender, user: undefined },
    ]);
    const parsed = await simpleParser(smtp.mails[0]?.raw ?? "");
    expect(parsed.from).toMatchObject({ text: sender });
  });

  test("1,000 recipients: refused in one short line, exit 2, before any request; 50 get a message each", async () => {
    using fakes = world();
    const many = Array.from({ length: 1000 }, (_, i) => `reader${i}@example.com`);
    const refused = await digest(fakes, ["--email-to", many.join(",")], {
      SMTP_URL: smtpUrl(25),
    });
    expect(refused.error).toBeInstanceOf(ConfigError);
    const line = (refused.error as Error).message;
    expect(line).toEndWith(
      'characters)" is invalid: 1000 addresses: at most 50 (each gets a message of its own; use a mailing list for more)',
    );
    expect(line).toStartWith('--email-to="reader0@example.com,reader1@example.com');
    expect(line.length).toBeLessThan(300);
    expect(line).not.toContain("\n");
    expect(fakes.search.requests).toEqual([]);

    const smtp = await startFakeSmtp({ user: USER, password: PASSWORD });
    cleanups.push(smtp.stop);
    // Fifty, one of them twice in another case: fifty messages, each to one reader.
    const fifty = [...many.slice(0, 50), "READER0@example.com"];
    const sent = await digest(fakes, ["--email-to", fifty.join(",")], {
      SMTP_URL: smtpUrl(smtp.port),
    });
    expect(sent.error).toBeUndefined();
    expect(smtp.mails).toHaveLength(50);
    expect(smtp.mails.every((mail) => mail.to.length === 1)).toBe(true);
    expect(new Set(smtp.mails.map((mail) => mail.to[0]))).toEqual(new Set(many.slice(0, 50)));
    for (const received of smtp.mails.slice(0, 3)) {
      const parsed = await simpleParser(received.raw);
      expect(parsed.to).toMatchObject({ text: received.to[0] });
    }
    expect(sent.logger.lines).toContain(
      `info Emailed to reader0@example.com, reader1@example.com, reader2@example.com and 47 more, a message each, from ${USER} through 127.0.0.1:${smtp.port}`,
    );
  });

  test("bad addresses, a bad SMTP_URL or none: one line, exit 2, before any request", async () => {
    using fakes = world();
    const cases: Array<[string[], Record<string, string>, string]> = [
      [
        ["--email-to", "ada@example.com,not an address"],
        { SMTP_URL: smtpUrl(25) },
        '--email-to="ada@example.com,not an address" is invalid: "not an address": expected an email address such as reader@example.com, comma-separated',
      ],
      [
        ["--email-to", "ada@example.com"],
        { SMTP_URL: "http://user:hunter22@mail.example.com" },
        "SMTP_URL is invalid: expected smtp://user:password@host:587 or smtps://user:password@host:465 (not http:)",
      ],
      [
        ["--email-to", "ada@example.com"],
        {},
        "SMTP_URL is needed with --email-to / DIGEST_EMAIL_TO: expected smtp://user:password@host:587 or smtps://user:password@host:465",
      ],
      [
        [],
        {
          DIGEST_EMAIL_TO: "ada@example.com",
          SMTP_URL: "smtp://mailer:hunter22@mail.example.com",
          USER: "no such user",
        },
        "DIGEST_EMAIL_FROM is needed with --email-to when SMTP_URL's user name is no address and this user and host make none: expected an email address such as reader@example.com",
      ],
    ];
    for (const [args, env, line] of cases) {
      const { error } = await digest(fakes, args, env);
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toBe(line);
      expect((error as Error).message).not.toContain("hunter22");
    }
    expect(fakes.search.requests).toEqual([]);
  });
});
