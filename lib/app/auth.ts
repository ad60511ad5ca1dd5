import type { Context, MiddlewareHandler } from "hono";
import { getCookie } from "hono/cookie";
import { safeEqual } from "../secrets.ts";
import type { AppEnv } from "./context.ts";
import { SESSION_COOKIE, type SessionSigner } from "./session.ts";

export const LOGIN_PATH = "/admin/login";
export const ANONYMOUS = "anonymous";
export const ADMIN_USER = "admin";

/**
 * With no ADMIN_TOKEN (loopback only, see assertSafeBind) everyone is "anonymous". With one,
 * every request needs it: `Authorization: Bearer <token>`, or the cookie the login form sets.
 * The API answers 401; admin pages send the browser to the login form.
 */
export function authMiddleware(options: {
  adminToken: string | null;
  sessions: SessionSigner | null;
  now: () => Date;
}): MiddlewareHandler<AppEnv> {
  const { adminToken, sessions, now } = options;
  return async function auth(c, next) {
    c.set("authenticated", false);
    c.set("username", ANONYMOUS);
    if (adminToken === null) return next();
    if (c.req.path === LOGIN_PATH) return next();
    if (hasValidBearer(c, adminToken) || sessions?.verify(getCookie(c, SESSION_COOKIE), now())) {
      c.set("authenticated", true);
      c.set("username", ADMIN_USER);
      return next();
    }
    if (!c.req.path.startsWith("/admin")) {
      c.header("WWW-Authenticate", 'Bearer realm="inventory"');
      return c.json(
        { error: "Authentication required: send Authorization: Bearer <ADMIN_TOKEN>" },
        401,
      );
    }
    if (c.req.method === "GET" || c.req.method === "HEAD") {
      const next = `${c.req.path}${new URL(c.req.url).search}`;
      return c.redirect(`${LOGIN_PATH}?${new URLSearchParams({ next })}`, 302);
    }
    return c.text("Log in first: your session has expired.", 401);
  };
}

function hasValidBearer(c: Context<AppEnv>, adminToken: string): boolean {
  const match = c.req.header("authorization")?.match(/^Bearer\s+(\S+)\s*$/i);
  return match?.[1] !== undefined && safeEqual(match[1], adminToken);
}
