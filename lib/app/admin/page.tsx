import type { Context } from "hono";
import { html } from "hono/html";
import type { Child } from "hono/jsx";
import type { AppEnv } from "../context.ts";
import type { PageContext } from "./layout.tsx";
import { noticeText } from "./notices.ts";

export function pageContext(c: Context<AppEnv>): PageContext {
  return {
    path: c.req.path,
    username: c.get("username") ?? "anonymous",
    csrfToken: c.get("csrfToken") ?? "",
    authenticated: c.get("authenticated") ?? false,
    notice: noticeText(c.req.query("notice"), c.req.query("n")),
  };
}

/** Sends a page. Admin pages show deliveries and secrets, so no cache may keep them. */
export function renderPage(
  c: Context<AppEnv>,
  page: Child,
  status: 200 | 400 | 401 | 403 | 404 | 409 | 429 = 200,
): Response | Promise<Response> {
  c.header("Cache-Control", "no-store");
  return c.html(html`<!DOCTYPE html>${page}`, status);
}
