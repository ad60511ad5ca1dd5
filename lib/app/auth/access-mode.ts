/**
 * Which of the app's three ways of letting requests in applies, said the same way by the start
 * line and by `tokens add` (authMiddleware is what enforces them):
 * - protected: ADMIN_TOKEN is set; every request needs it, its login session or an API token;
 * - tokens: no ADMIN_TOKEN, but API tokens exist: the API and /metrics need one, the admin
 *   pages stay open (loopback only);
 * - open: neither; anyone who can reach the port can do anything (loopback only: development).
 */
export type AccessMode = "protected" | "tokens" | "open";

export function accessMode(adminToken: string | null, tokenCount: number): AccessMode {
  if (adminToken !== null) return "protected";
  return tokenCount > 0 ? "tokens" : "open";
}

/** The start line's sentence about who may do what, for an app serving at `url`. */
export function accessModeLine(mode: AccessMode, url: string): string {
  switch (mode) {
    case "protected":
      return `Protected: the API, the admin and /metrics need ADMIN_TOKEN (Authorization: Bearer, or the login form at ${url}/admin/login) or an API token`;
    case "tokens":
      return `No ADMIN_TOKEN: the API and /metrics need an API token, but the admin at ${url}/admin is open: anyone who can reach this port can change webhooks there; set ADMIN_TOKEN to protect it`;
    case "open":
      return "Open, for development (no ADMIN_TOKEN, no API token, loopback only): anyone who can reach this port can change items and webhooks; set ADMIN_TOKEN to protect it";
  }
}

/** What `tokens add` says when its environment has no ADMIN_TOKEN (the app's may be the same). */
export const OPEN_APP_TOKEN_NOTE =
  "Note: ADMIN_TOKEN is not set here. An app on this database without it refuses API requests that carry no token while any API token exists (a read token's owner can rely on that), but its admin pages stay open to anyone who can reach its port, and can change webhooks; set ADMIN_TOKEN to protect them too.";
