import type { Context } from "hono";
import {
  maskUrlPassword,
  maskUrlPasswords,
  maskUrlSecrets,
  maskUrlSecretsInText,
} from "../../text/url-credentials.ts";
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
}

export const AS_STORED: Shown = {
  url: maskUrlPassword,
  error: maskUrlPasswords,
  answerHeaders: (text) => text,
};
const FOR_READ_TOKEN: Shown = {
  url: maskUrlSecrets,
  error: maskUrlSecretsInText,
  answerHeaders: maskUrlSecretsInText,
};

export function shownFor(c: Context<AppEnv>): Shown {
  return c.get("readOnly") ? FOR_READ_TOKEN : AS_STORED;
}
