/** @jsxImportSource hono/jsx */
import type { Context } from "hono";
import { html } from "hono/html";
import type { Child } from "hono/jsx";
import { escapeInvisible } from "../../text/control.ts";
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

/**
 * Sends a page. Admin pages show deliveries and secrets, so no cache may keep them. BiDi
 * overrides and other invisible characters are refused in names now, but older rows and
 * payloads may hold them: the whole page shows any as `\u202e`, never raw (none is markup).
 */
export async function renderPage(
  c: Context<AppEnv>,
  page: Child,
  status: 200 | 400 | 401 | 403 | 404 | 409 | 429 = 200,
): Promise<Response> {
  c.header("Cache-Control", "no-store");
  const rendered = await html`<!DOCTYPE html>${page}`;
  return c.html(escapeInvisible(String(rendered)), status);
}
