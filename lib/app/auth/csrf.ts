import type { MiddlewareHandler } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { csrf } from "hono/csrf";
import { HTTPException } from "hono/http-exception";
import { hmac, randomToken, safeEqual } from "../../secrets.ts";
import type { AppEnv } from "../context.ts";

export const CSRF_COOKIE = "admin_csrf";
export const CSRF_FIELD = "_csrf";

/**
 * CSRF protection for the admin's forms, two checks that must both pass on every POST:
 * hono's csrf() (the browser's Origin / Sec-Fetch-Site must be this site), and a token in a
 * hidden field that must match this browser's HttpOnly, SameSite=Strict cookie (signed double
 * submit: the field is an HMAC of the cookie under a server key, so a cookie planted by a
 * sibling subdomain is of no use). The second check still holds where a proxy rewrites Origin.
 */
export function csrfMiddleware(options: { key: string }): MiddlewareHandler<AppEnv> {
  const originCheck = csrf();
  return async function csrfProtection(c, next) {
    let cookie = getCookie(c, CSRF_COOKIE);
    if (!cookie || !/^[\w-]{43}$/.test(cookie)) {
      cookie = randomToken(32);
      setCookie(c, CSRF_COOKIE, cookie, {
        path: "/admin",
        httpOnly: true,
        sameSite: "Strict",
        secure: new URL(c.req.url).protocol === "https:",
      });
    }
    const expected = hmac(options.key, cookie);
    c.set("csrfToken", expected);
    if (/^(GET|HEAD|OPTIONS)$/.test(c.req.method)) return next();
    try {
      await originCheck(c, async () => {});
    } catch (error) {
      if (error instanceof HTTPException) return forbidden(c);
      throw error;
    }
    let form: Awaited<ReturnType<typeof c.req.parseBody>>;
    try {
      form = await c.req.parseBody();
    } catch {
      // A body that does not parse as the form it claims to be (a multipart body without its
      // final boundary): the client's mistake, not an internal error.
      return c.text("Bad request: the form could not be read.\n", 400);
    }
    const sent = form[CSRF_FIELD];
    if (typeof sent !== "string" || !safeEqual(sent, expected)) return forbidden(c);
    return next();
  };
}

function forbidden(c: Parameters<MiddlewareHandler<AppEnv>>[0]) {
  return c.text(
    "This form came from another site or has expired: go back, reload the page and submit it again.",
    403,
  );
}
