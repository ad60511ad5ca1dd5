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
