import type { Context, MiddlewareHandler } from "hono";
import { isJsonContentType } from "../api/json-body.ts";
import type { AppEnv } from "../context.ts";

/** Methods that change nothing: never refused here. */
const SAFE_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * No cross-site writes to the API (after authMiddleware, which sets `via`). A browser sends a
 * page's request with the login cookie, and on the open mode with nothing, so a write that rode
 * on either must come from the app's own pages:
 * - an `Origin` other than the app's own, or `Sec-Fetch-Site` other than same-origin (another
 *   port of the same host is "same-site"), is refused 403;
 * - the body must be declared JSON (415 otherwise): a cross-site page can send JSON only after
 *   a CORS preflight, which this app never answers, while a form or a "simple" fetch (no body,
 *   text/plain) needs none.
 * A bearer token needs neither: a browser never adds one to another site's request by itself.
 */
export function apiCrossSiteGuard(): MiddlewareHandler<AppEnv> {
  return async function crossSiteGuard(c, next) {
    if (SAFE_METHODS.has(c.req.method) || c.get("via") === "bearer") return next();
    const foreign = foreignOrigin(c);
    if (foreign !== null) {
      return c.json(
        {
          error: `Cross-site request refused: ${foreign}; a program sends Authorization: Bearer <token>`,
        },
        403,
      );
    }
    if (!isJsonContentType(c.req.header("content-type"))) {
      return c.json(
        {
          error:
            "Content-Type must be application/json: send a JSON body ({} where nothing else is needed) or Authorization: Bearer <token>",
        },
        415,
      );
    }
    return next();
  };
}

/** Why the request came from another origin, or null when it is the app's own or unsaid. */
function foreignOrigin(c: Context<AppEnv>): string | null {
  const fetchSite = c.req.header("sec-fetch-site");
  if (fetchSite !== undefined && fetchSite !== "same-origin" && fetchSite !== "none") {
    return `Sec-Fetch-Site is ${JSON.stringify(fetchSite)}`;
  }
  const origin = c.req.header("origin");
  if (origin === undefined) return null;
  // Host against host: behind a proxy that ends TLS the request's own scheme is http while the
  // page's is https; the Host check (host-check.ts) has already vouched for the name.
  const own = c.req.header("host") ?? new URL(c.req.url).host;
  let host: string | null = null;
  try {
    host = origin === "null" ? null : new URL(origin).host;
  } catch {
    host = null;
  }
  return host !== null && host.toLowerCase() === own.toLowerCase()
    ? null
    : `Origin ${JSON.stringify(origin)} is not this app's`;
}
