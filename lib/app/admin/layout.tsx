/** @jsxImportSource hono/jsx */
import type { Child } from "hono/jsx";
import { STYLES } from "./styles.ts";

/** The admin's sections, in menu order. A new page (workers, metrics) is one more entry. */
export const NAV: ReadonlyArray<{ href: string; label: string }> = [
  { href: "/admin/background-tasks", label: "Background Tasks" },
  { href: "/admin/webhooks", label: "Webhooks" },
  { href: "/admin/items", label: "Items" },
];

/** What every page needs from the request: who is logged in, the CSRF token, a notice. */
export interface PageContext {
  path: string;
  username: string;
  csrfToken: string;
  /** True when logged in with ADMIN_TOKEN, so a Log out button makes sense. */
  authenticated: boolean;
  notice: string | null;
}

export function Layout(props: { title: string; page: PageContext; children?: Child }) {
  const { page } = props;
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${props.title} · Inventory admin`}</title>
        {/* A constant of ours, not user data: <style> is raw text, so escaping would break it. */}
        <style dangerouslySetInnerHTML={{ __html: STYLES }} />
      </head>
      <body>
        <header class="top">
          <a class="brand" href="/admin">
            Inventory admin
          </a>
          <nav>
            {NAV.map((entry) => (
              <a
                href={entry.href}
                class={page.path.startsWith(entry.href) ? "current" : undefined}
                aria-current={page.path.startsWith(entry.href) ? "page" : undefined}
              >
                {entry.label}
              </a>
            ))}
          </nav>
          <span class="user">
            {page.username}
            {page.authenticated ? (
              <form method="post" action="/admin/logout" class="inline">
                <CsrfField token={page.csrfToken} />
                <button type="submit" class="link">
                  Log out
                </button>
              </form>
            ) : null}
          </span>
        </header>
        <main>
          {page.notice ? (
            <p class="notice" role="status">
              {page.notice}
            </p>
          ) : null}
          {props.children}
        </main>
      </body>
    </html>
  );
}

export function CsrfField(props: { token: string }) {
  return <input type="hidden" name="_csrf" value={props.token} />;
}

/** A one-button POST form: how the admin does every state change without JavaScript. */
export function PostButton(props: {
  action: string;
  label: string;
  csrfToken: string;
  danger?: boolean;
  fields?: Record<string, string>;
}) {
  return (
    <form method="post" action={props.action} class="inline">
      <CsrfField token={props.csrfToken} />
      {Object.entries(props.fields ?? {}).map(([name, value]) => (
        <input type="hidden" name={name} value={value} />
      ))}
      <button type="submit" class={props.danger ? "danger" : undefined}>
        {props.label}
      </button>
    </form>
  );
}

export function FieldErrors(props: { messages?: string[] }) {
  if (!props.messages?.length) return null;
  return <span class="field-error">{props.messages.join("; ")}</span>;
}
