/**
 * `scheme://user:password@host` written anywhere in a text, with its credentials: userinfo runs
 * from the `//` to the last `@` before the host, holding no `/`, `?`, `#` or space (RFC 3986; an
 * `@` in a password is written %40).
 */
const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#<>"'`]*@/gi;

/**
 * The text with every URL's `user:password@` taken out ("http://ollama.lan:11434"), for
 * anything a person reads: a message, a log line, help. The request itself keeps them.
 */
export function withoutUrlCredentials(text: string): string {
  return text.replace(USERINFO, "$1");
}

/** What a URL's password is shown as; given back unchanged on a save, it keeps the stored one. */
export const MASKED_PASSWORD = "***";

/**
 * A whole URL value's start `scheme://user:password@`, template text allowed (`{{ … }}` has
 * spaces): userinfo up to the last `@` before the host's end, as WHATWG URL reads it.
 */
const URL_USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#\\:@]*):([^/?#\\]*)@/i;
/** The same inside a text: a URL ends at a space or a quote. */
const TEXT_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/?#\\:@<>"'`]*):([^\s/?#\\<>"'`]*)@/gi;

function masked(scheme: string, user: string, password: string): string {
  return `${scheme}${user}:${password === "" ? "" : MASKED_PASSWORD}@`;
}

/**
 * A webhook URL as a person or a client reads it: `https://user:secret@host/path` becomes
 * `https://user:***@host/path`; the user name stays, so it is clear which account is used.
 * What is stored and sent keeps the password.
 */
export function maskUrlPassword(url: string): string {
  return url.replace(URL_USERINFO, (_, scheme, user, password) => masked(scheme, user, password));
}

/**
 * A webhook URL as a read-only API token reads it: the password masked as maskUrlPassword does,
 * and every query parameter's value too (`?api_key=***&id=***`), where services put keys.
 */
export function maskUrlSecrets(url: string): string {
  const masked = maskUrlPassword(url);
  const query = masked.indexOf("?");
  if (query < 0) return masked;
  const fragment = masked.indexOf("#", query);
  const end = fragment < 0 ? masked.length : fragment;
  const params = masked
    .slice(query + 1, end)
    .split("&")
    .map((param) => {
      const equals = param.indexOf("=");
      return equals < 0 || equals === param.length - 1
        ? param
        : `${param.slice(0, equals + 1)}${MASKED_PASSWORD}`;
    });
  return `${masked.slice(0, query + 1)}${params.join("&")}${masked.slice(end)}`;
}

/** A query parameter's value in a text, relative URLs' too (`?api_key=…`, `&id=…`). */
const QUERY_VALUE = /([?&][^\s=&#?"'<>`]+=)[^\s&#"'<>`]+/g;

/**
 * A text that may hold URLs (an attempt's error, a receiver's answer headers) as a read-only API
 * token reads it: every URL's password masked, and every query parameter's value, as
 * maskUrlSecrets does for a URL (a redirect's Location keeps the webhook URL's `?api_key=`).
 */
export function maskUrlSecretsInText(text: string): string {
  return maskUrlPasswords(text).replace(QUERY_VALUE, `$1${MASKED_PASSWORD}`);
}

/** The text with every URL's password masked as maskUrlPassword does (log lines, errors). */
export function maskUrlPasswords(text: string): string {
  return text.replace(TEXT_USERINFO, (_, scheme, user, password) => masked(scheme, user, password));
}

/** Whether a URL value's password is the mask itself (`user:***@`). */
export function hasMaskedPassword(url: string): boolean {
  return URL_USERINFO.exec(url)?.[3] === MASKED_PASSWORD;
}

/**
 * The URL to save when `submitted` came from a masked answer: its password `***` stands for the
 * stored URL's password, kept only when scheme, user and host are the stored URL's (so a
 * change of host cannot carry the password to another server). Any other URL is saved as given.
 */
export function keepStoredPassword(submitted: string, stored: string): string {
  const given = URL_USERINFO.exec(submitted);
  const before = URL_USERINFO.exec(stored);
  if (given === null || before === null || given[3] !== MASKED_PASSWORD) return submitted;
  const [, scheme = "", user = "", ,] = given;
  const sameAccount =
    scheme.toLowerCase() === (before[1] ?? "").toLowerCase() &&
    user === before[2] &&
    hostOf(submitted.slice(given[0].length)) === hostOf(stored.slice(before[0].length));
  if (!sameAccount) return submitted;
  return `${scheme}${user}:${before[3]}@${submitted.slice(given[0].length)}`;
}

/** The host (and port) at the start of what follows a URL's userinfo, lowercased. */
function hostOf(afterUserinfo: string): string {
  return (/^[^/?#\\]*/.exec(afterUserinfo)?.[0] ?? "").toLowerCase();
}
