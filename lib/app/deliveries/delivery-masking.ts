import type { Context } from "hono";
import {
  MASKED_PASSWORD,
  maskUrlPassword,
  maskUrlPasswords,
  maskUrlSecrets,
  maskUrlSecretsInText,
} from "../../text/url-credentials.ts";
import type { Delivery, Webhook } from "../../webhooks/model.ts";
import type { AppEnv } from "../context.ts";

/**
 * How an answer shows what may hold a URL's credentials: a URL, an error, a receiver's answer
 * headers (a redirect's Location). Passwords are masked for everyone; for a read-only token
 * query values too, wherever they appear.
 */
export interface Shown {
  url(url: string): string;
  error(text: string): string;
  answerHeaders(text: string): string;
  answerBody(text: string): string;
}

export const AS_STORED: Shown = {
  url: maskUrlPassword,
  error: maskUrlPasswords,
  answerHeaders: (text) => text,
  answerBody: (text) => text,
};
const FOR_READ_TOKEN: Shown = {
  url: maskUrlSecrets,
  error: maskUrlSecretsInText,
  answerHeaders: maskUrlSecretsInText,
  answerBody: (text) => text,
};

export function shownFor(c: Context<AppEnv>): Shown {
  return c.get("readOnly") ? FOR_READ_TOKEN : AS_STORED;
}

/** Shorter values are left alone: masking every `7` or `yes` in an answer would hide nothing. */
const MIN_CREDENTIAL_LENGTH = 6;

/**
 * `shown` for one delivery's attempts: for a read-only token, the credentials this delivery was
 * sent with (header values, the URL's password and query values, the webhook's and as rendered)
 * masked wherever a receiver's answer repeats them (a request bin or httpbin echoes the request).
 */
export function shownForDelivery(
  c: Context<AppEnv>,
  sent: { webhook: Webhook | null; delivery: Delivery },
): Shown {
  const shown = shownFor(c);
  if (!c.get("readOnly")) return shown;
  const values = credentialValues(sent);
  if (values.length === 0) return shown;
  const mask = (text: string) => values.reduce((t, v) => t.replaceAll(v, MASKED_PASSWORD), text);
  return {
    ...shown,
    error: (text) => shown.error(mask(text)),
    answerHeaders: (text) => shown.answerHeaders(mask(text)),
    answerBody: (text) => shown.answerBody(mask(text)),
  };
}

function credentialValues(sent: { webhook: Webhook | null; delivery: Delivery }): string[] {
  const { webhook, delivery } = sent;
  const headers = [...(webhook?.headers ?? []), ...(delivery.headers ?? [])];
  const urls = [webhook?.url, delivery.url].filter((u): u is string => typeof u === "string");
  // A value whole, and its credential after a scheme (`Bearer …`), which an answer may show alone.
  const values = headers.flatMap(([, value]) => [
    value.trim(),
    value.trim().split(/\s+/).at(-1) ?? "",
  ]);
  for (const url of urls) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      continue;
    }
    values.push(parsed.password, decodedOrAsIs(parsed.password));
    for (const [, value] of parsed.searchParams) values.push(value);
    for (const raw of parsed.search.slice(1).split("&")) {
      if (raw.includes("=")) values.push(raw.slice(raw.indexOf("=") + 1));
    }
  }
  // Longest first, so a value holding another is masked whole.
  return [...new Set(values)]
    .filter((value) => value.length >= MIN_CREDENTIAL_LENGTH)
    .sort((a, b) => b.length - a.length);
}

function decodedOrAsIs(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
