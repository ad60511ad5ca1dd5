import { Hono } from "hono";
import { deleteCookie, setCookie } from "hono/cookie";
import { safeEqual } from "../secrets.ts";
import { localAdminPath } from "./admin/format.ts";
import { CsrfField, Layout, type PageContext } from "./admin/layout.tsx";
import { pageContext, renderPage } from "./admin/page.tsx";
import { LOGIN_PATH } from "./auth.ts";
import type { AppEnv } from "./context.ts";
import { SESSION_COOKIE, SESSION_MAX_AGE_SECONDS, type SessionSigner } from "./session.ts";

/** The login form (ADMIN_TOKEN → session cookie) and logout, both CSRF-checked POSTs. */
export function loginRoutes(options: {
  adminToken: string | null;
  sessions: SessionSigner | null;
  now: () => Date;
}): Hono<AppEnv> {
  const { adminToken, sessions, now } = options;
  const routes = new Hono<AppEnv>();

  routes.get("/login", (c) => {
    if (adminToken === null) return c.redirect("/admin", 302);
    const next = localAdminPath(c.req.query("next"), "/admin");
    return renderPage(c, <LoginPage page={pageContext(c)} next={next} failed={false} />);
  });

  routes.post("/login", async (c) => {
    if (adminToken === null || sessions === null) return c.redirect("/admin", 303);
    const form = await c.req.parseBody();
    const next = localAdminPath(form.next, "/admin");
    const token = typeof form.token === "string" ? form.token.trim() : "";
    if (!safeEqual(token, adminToken)) {
      return renderPage(c, <LoginPage page={pageContext(c)} next={next} failed />, 401);
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

  routes.post("/logout", (c) => {
    deleteCookie(c, SESSION_COOKIE, { path: "/" });
    return c.redirect(adminToken === null ? "/admin" : LOGIN_PATH, 303);
  });

  return routes;
}

function LoginPage(props: { page: PageContext; next: string; failed: boolean }) {
  return (
    <Layout title="Log in" page={props.page}>
      <h1>Log in</h1>
      {props.failed ? (
        <p class="error-box" role="alert">
          That is not the admin token.
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
