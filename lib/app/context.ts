/** What the app's middleware puts on every request's context, for the API and admin routes. */
export type AppEnv = {
  /** What Bun.serve passes as the env: its Server, whose requestIP gives the peer's address. */
  Bindings: {
    requestIP?: (request: Request) => { address: string } | null;
  };
  Variables: {
    /** A fresh UUID per request, also sent back as `X-Request-Id` and put in webhook payloads. */
    requestId: string;
    /** "admin" once authenticated with ADMIN_TOKEN; "anonymous" when no token is configured. */
    username: string;
    /** True when the request carried a valid ADMIN_TOKEN (bearer or login cookie). */
    authenticated: boolean;
    /** A read-only API token: answers show credentials (header values, …) masked as ***. */
    readOnly: boolean;
    /**
     * What admitted the request: a bearer token (which no browser sends across sites), the
     * login form's cookie, or nothing (open: no ADMIN_TOKEN). The API's cross-site check
     * applies to the last two.
     */
    via: "bearer" | "session" | "open";
    /**
     * The credential itself, for what belongs to one (idempotency keys): `via:username`, and an
     * API token also by its hash (as stored), so a revoked token's name given to a new token is
     * another credential.
     */
    credential: string;
    /** The CSRF token admin forms carry in their hidden `_csrf` field. */
    csrfToken: string;
  };
};
