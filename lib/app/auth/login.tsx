/** @jsxImportSource hono/jsx */
import { Hono } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { localAdminPath } from "../admin/format.ts";
import { CsrfField, Layout, type PageContext } from "../admin/layout.tsx";
import { pageContext, renderPage } from "../admin/page.tsx";
import type { AppEnv } from "../context.ts";
import { type AdminAuth, checkToken, LOGIN_PATH, retryAfterSeconds } from "./auth.ts";
import { SESSION_COOKIE, SESSION_MAX_AGE_SECONDS } from "./session.ts";

/**
 * The login form (ADMIN_TOKEN → session cookie; wrong tokens throttled per client) and logout
 * (the session recorded as ended, so the cookie is refused even if kept), both CSRF-checked.
 */
export function loginRoutes(auth: AdminAuth): Hono<AppEnv> {
  const { adminToken, sessions, now } = auth;
  const routes = new Hono<AppEnv>();

  routes.get("/login", async (c) => {
    if (adminToken === null) return c.redirect("/admin", 302);
    const next = localAdminPath(c.req.query("next"), "/admin");
    return renderPage(c, <LoginPage page={pageContext(c)} next={next} failed={null} />);
  });

  routes.post("/login", async (c) => {
    if (adminToken === null || sessions === null) return c.redirect("/admin", 303);
    const form = await c.req.parseBody();
    const next = localAdminPath(form.next, "/admin");
    const token = typeof form.token === "string" ? form.token.trim() : "";
    const verdict = checkToken(c, auth, token, "token on the login form");
    if (verdict === "locked") {
      const seconds = retryAfterSeconds(c, auth);
      c.header("Retry-After", String(seconds));
      const failed = `Too many wrong tokens from your address: try again in ${seconds} s.`;
      return renderPage(c, <LoginPage page={pageContext(c)} next={next} failed={failed} />, 429);
    }
    if (verdict === "wrong") {
      const failed = "That is not the admin token.";
      return renderPage(c, <LoginPage page={pageContext(c)} next={next} failed={failed} />, 401);
    }
    setCookie(c, SESSION_COOKIE, sessions.issue(now()), {
      path: "/",
      httpOnly: true,
      sameSite: "Strict",
      secure: new URL(c.req.url).protocol === "https:",
      maxAge: SESSION_MAX_AGE_SECONDS,
    });
    return c.redirect(next, 303);
  });

  routes.post("/logout", async (c) => {
    const session = sessions?.verify(getCookie(c, SESSION_COOKIE), now());
    if (session) await auth.revocations.revoke(session.id, session.expiresAt);
    deleteCookie(c, SESSION_COOKIE, { path: "/" });
    return c.redirect(adminToken === null ? "/admin" : LOGIN_PATH, 303);
  });

  return routes;
}

function LoginPage(props: { page: PageContext; next: string; failed: string | null }) {
  return (
    <Layout title="Log in" page={props.page}>
      <h1>Log in</h1>
      {props.failed ? (
        <p class="error-box" role="alert">
          {props.failed}
        </p>
      ) : null}
      <form method="post" action={LOGIN_PATH} class="stacked">
        <CsrfField token={props.page.csrfToken} />
        <input type="hidden" name="next" value={props.next} />
        <label>
          Admin token
          <span class="hint">The value of ADMIN_TOKEN the app was started with.</span>
          <input type="password" name="token" autocomplete="current-password" required />
        </label>
        <div class="actions">
          <button type="submit" class="primary">
            Log in
          </button>
        </div>
      </form>
    </Layout>
  );
}
