import type { Context, MiddlewareHandler } from "hono";
import { getCookie } from "hono/cookie";
import { clientKey, type LoginThrottle } from "../http/token-throttle.ts";
import type { Logger } from "../log.ts";
import { safeEqual } from "../secrets.ts";
import type { SessionRevocations } from "../webhooks/ports.ts";
import type { AppEnv } from "./context.ts";
import { SESSION_COOKIE, type SessionSigner } from "./session.ts";

export const LOGIN_PATH = "/admin/login";
export const ANONYMOUS = "anonymous";
export const ADMIN_USER = "admin";

/** Everything that decides who is logged in, shared by the middleware and the login form. */
export interface AdminAuth {
  adminToken: string | null;
  sessions: SessionSigner | null;
  /** Sessions ended by logout (in the database, so every app process sees them). */
  revocations: SessionRevocations;
  throttle: LoginThrottle;
  now: () => Date;
  logger: Pick<Logger, "warn">;
}

/**
 * With no ADMIN_TOKEN (loopback only, see assertSafeBind) everyone is "anonymous". With one,
 * every request needs it: `Authorization: Bearer <token>`, or the cookie the login form sets
 * (not logged out). The API answers 401; admin pages send the browser to the login form. A
 * wrong bearer token counts against the client like a wrong login (LoginThrottle).
 */
export function authMiddleware(auth: AdminAuth): MiddlewareHandler<AppEnv> {
  const { adminToken, sessions, revocations, now } = auth;
  return async function authenticate(c, next) {
    c.set("authenticated", false);
    c.set("username", ANONYMOUS);
    if (adminToken === null) return next();
    if (c.req.path === LOGIN_PATH) return next();
    const bearer = bearerToken(c);
    if (bearer !== null) {
      const verdict = checkToken(c, auth, bearer, "bearer token");
      if (verdict === "locked") return tooManyJson(c, auth);
      if (verdict === "wrong") return unauthorized(c, "The bearer token is not ADMIN_TOKEN");
      return admitted(c, next);
    }
    const session = sessions?.verify(getCookie(c, SESSION_COOKIE), now());
    if (session && !(await revocations.isRevoked(session.id))) return admitted(c, next);
    if (!c.req.path.startsWith("/admin")) {
      return unauthorized(c, "Authentication required: send Authorization: Bearer <ADMIN_TOKEN>");
    }
    if (c.req.method === "GET" || c.req.method === "HEAD") {
      const next = `${c.req.path}${new URL(c.req.url).search}`;
      return c.redirect(`${LOGIN_PATH}?${new URLSearchParams({ next })}`, 302);
    }
    return c.text("Log in first: your session has expired.", 401);
  };
}

/**
 * Checks a token a client sent (login form or bearer header) under the throttle: "locked" while
 * the client must wait (the token is not even looked at), "wrong" (counted and logged), or "ok".
 */
export function checkToken(
  c: Context<AppEnv>,
  auth: AdminAuth,
  token: string,
  via: string,
): "ok" | "wrong" | "locked" {
  const client = clientOf(c);
  const nowMs = auth.now().getTime();
  if (auth.throttle.waitMs(client, nowMs) > 0) return "locked";
  if (auth.adminToken !== null && safeEqual(token, auth.adminToken)) {
    auth.throttle.succeeded(client);
    return "ok";
  }
  const { failures, lockedMs } = auth.throttle.failed(client, nowMs);
  const lock = lockedMs > 0 ? `; further tries refused for ${Math.ceil(lockedMs / 1000)} s` : "";
  auth.logger.warn(`Wrong admin ${via} from ${client} (${failures} in a row${lock})`);
  return "wrong";
}

/** Seconds the client must still wait, for Retry-After and the message. */
export function retryAfterSeconds(c: Context<AppEnv>, auth: AdminAuth): number {
  return Math.max(1, Math.ceil(auth.throttle.waitMs(clientOf(c), auth.now().getTime()) / 1000));
}

function clientOf(c: Context<AppEnv>): string {
  return clientKey(c.env?.requestIP?.(c.req.raw)?.address);
}

function admitted(c: Context<AppEnv>, next: () => Promise<void>) {
  c.set("authenticated", true);
  c.set("username", ADMIN_USER);
  return next();
}

function unauthorized(c: Context<AppEnv>, error: string) {
  c.header("WWW-Authenticate", 'Bearer realm="inventory"');
  return c.json({ error }, 401);
}

function tooManyJson(c: Context<AppEnv>, auth: AdminAuth) {
  const seconds = retryAfterSeconds(c, auth);
  c.header("Retry-After", String(seconds));
  return c.json(
    { error: `Too many wrong tokens from this address: try again in ${seconds} s` },
    429,
  );
}

function bearerToken(c: Context<AppEnv>): string | null {
  // Another scheme (Basic from a proxy in front) is not a try at ADMIN_TOKEN.
  const header = c.req.header("authorization");
  if (header === undefined || !/^Bearer(\s|$)/i.test(header)) return null;
  return header.match(/^Bearer\s+(\S+)\s*$/i)?.[1] ?? "";
}
