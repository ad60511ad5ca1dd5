import type { Context, MiddlewareHandler } from "hono";
import { getCookie } from "hono/cookie";
import { clientKey, type LoginThrottle } from "../../http/token-throttle.ts";
import type { Logger } from "../../log.ts";
import { safeEqual } from "../../secrets.ts";
import type { ApiToken, ApiTokenRepo, SessionRevocations } from "../../webhooks/ports.ts";
import type { AppEnv } from "../context.ts";
import { hashApiToken, looksLikeApiToken, tokenAllows, verifyApiToken } from "./api-tokens.ts";
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
  /** API tokens (`bun run app tokens`), accepted as bearer tokens beside ADMIN_TOKEN. */
  tokens?: ApiTokenRepo;
  now: () => Date;
  logger: Pick<Logger, "warn">;
}

/**
 * Who may do what. A bearer token is always checked, whatever ADMIN_TOKEN is: ADMIN_TOKEN, or an
 * API token (a read token: GET and HEAD of the API and /metrics only, else 403: the admin's
 * pages show credentials in full); anything else (made up, expired,
 * revoked) is 401 and counts against the client (LoginThrottle). Without one, the login form's
 * cookie (not logged out) admits. Without either:
 * - with ADMIN_TOKEN, the API answers 401 and admin pages send the browser to the login form;
 * - without it (loopback only, see assertSafeBind) the app is open to "anonymous", except that
 *   the API and /metrics refuse (401) once any API token exists: a token made to protect them
 *   must not leave them open beside it.
 * `via` tells later middleware what the request rode on (the API's cross-site check).
 */
export function authMiddleware(auth: AdminAuth): MiddlewareHandler<AppEnv> {
  const { adminToken, sessions, revocations, now } = auth;
  return async function authenticate(c, next) {
    c.set("authenticated", false);
    c.set("readOnly", false);
    c.set("username", ANONYMOUS);
    c.set("via", "open");
    c.set("credential", `open:${ANONYMOUS}`);
    if (c.req.path === LOGIN_PATH) return next();
    const bearer = bearerToken(c);
    if (bearer !== null) {
      c.set("via", "bearer");
      const verdict = await checkBearer(c, auth, bearer);
      if (verdict.kind === "locked") return tooManyJson(c, auth);
      if (verdict.kind === "refused") return unauthorized(c, verdict.reason);
      if (verdict.kind === "admin") return admitted(c, next);
      const { token } = verdict;
      // The admin's pages show every credential in full; a read token reads the API, masked.
      if (!token.write && isAdminPath(c.req.path)) {
        return c.json(
          {
            error: `The API token ${JSON.stringify(token.name)} may only read the API (/api, /metrics), not the admin`,
          },
          403,
        );
      }
      if (!tokenAllows(token, c.req.method)) {
        return c.json(
          { error: `The API token ${JSON.stringify(token.name)} may only read (GET, HEAD)` },
          403,
        );
      }
      c.set("readOnly", !token.write);
      return admitted(c, next, `token:${token.name}`, `#${hashApiToken(bearer)}`);
    }
    const session = sessions?.verify(getCookie(c, SESSION_COOKIE), now());
    if (session && !(await revocations.isRevoked(session.id))) {
      c.set("via", "session");
      return admitted(c, next);
    }
    const admin = isAdminPath(c.req.path);
    if (adminToken === null) {
      if (admin || !(await tokensExist(auth))) return next();
      return unauthorized(
        c,
        "Authentication required: API tokens exist, so the API needs one (Authorization: Bearer inv_…)",
      );
    }
    if (!admin) {
      return unauthorized(c, "Authentication required: send Authorization: Bearer <ADMIN_TOKEN>");
    }
    if (c.req.method === "GET" || c.req.method === "HEAD") {
      const next = `${c.req.path}${new URL(c.req.url).search}`;
      return c.redirect(`${LOGIN_PATH}?${new URLSearchParams({ next })}`, 302);
    }
    return c.text("Log in first: your session has expired.", 401);
  };
}

function isAdminPath(path: string): boolean {
  return path === "/admin" || path.startsWith("/admin/");
}

/** Whether any API token exists: read per request, so `tokens add` takes effect at once. */
async function tokensExist(auth: AdminAuth): Promise<boolean> {
  return auth.tokens !== undefined && (await auth.tokens.list()).length > 0;
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
  if (auth.throttle.waitMs(client, nowMs, token) > 0) return "locked";
  if (auth.adminToken !== null && safeEqual(token, auth.adminToken)) {
    auth.throttle.succeeded(token, nowMs);
    return "ok";
  }
  recordWrong(c, auth, `admin ${via}`);
  return "wrong";
}

/**
 * A bearer token under the throttle: ADMIN_TOKEN, the API token it is, locked while the client
 * must wait, or refused with the reason (counted and logged as wrong). A value shaped as an API
 * token is looked up even while the client is locked out: it is 256 random bits, which no rate
 * of guessing finds, so a neighbour's wrong tries must not hold a valid one back; a wrong one
 * then gets the lockout's answer.
 */
async function checkBearer(
  c: Context<AppEnv>,
  auth: AdminAuth,
  bearer: string,
): Promise<
  | { kind: "admin" }
  | { kind: "token"; token: ApiToken }
  | { kind: "locked" }
  | { kind: "refused"; reason: string }
> {
  const client = clientOf(c);
  const nowMs = auth.now().getTime();
  const locked = auth.throttle.waitMs(client, nowMs, bearer) > 0;
  if (locked && !looksLikeApiToken(bearer)) return { kind: "locked" };
  if (auth.adminToken !== null && safeEqual(bearer, auth.adminToken)) {
    auth.throttle.succeeded(bearer, nowMs);
    return { kind: "admin" };
  }
  const verdict = auth.tokens
    ? await verifyApiToken(auth.tokens, bearer, nowMs)
    : { kind: "unknown" as const };
  if (verdict.kind === "valid") {
    auth.throttle.succeeded(bearer, nowMs);
    return { kind: "token", token: verdict.token };
  }
  if (locked) return { kind: "locked" };
  if (verdict.kind === "expired") {
    const { name, expiresAt } = verdict.token;
    recordWrong(c, auth, `expired API token "${name}"`);
    const at = new Date(expiresAt ?? 0).toISOString();
    return { kind: "refused", reason: `The API token "${name}" expired at ${at}` };
  }
  recordWrong(c, auth, "admin bearer token");
  const reason =
    auth.adminToken === null
      ? "The bearer token is not an API token (revoked, or never made)"
      : "The bearer token is neither ADMIN_TOKEN nor an API token";
  return { kind: "refused", reason };
}

function recordWrong(c: Context<AppEnv>, auth: AdminAuth, what: string): void {
  const client = clientOf(c);
  const { failures, lockedMs } = auth.throttle.failed(client, auth.now().getTime());
  const lock = lockedMs > 0 ? `; further tries refused for ${Math.ceil(lockedMs / 1000)} s` : "";
  auth.logger.warn(`Wrong ${what} from ${client} (${failures} in a row${lock})`);
}

/** Seconds the client must still wait, for Retry-After and the message. */
export function retryAfterSeconds(c: Context<AppEnv>, auth: AdminAuth): number {
  return Math.max(1, Math.ceil(auth.throttle.waitMs(clientOf(c), auth.now().getTime()) / 1000));
}

function clientOf(c: Context<AppEnv>): string {
  return clientKey(c.env?.requestIP?.(c.req.raw)?.address);
}

function admitted(
  c: Context<AppEnv>,
  next: () => Promise<void>,
  username = ADMIN_USER,
  which = "",
) {
  c.set("authenticated", true);
  c.set("username", username);
  c.set("credential", `${c.get("via")}:${username}${which}`);
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
