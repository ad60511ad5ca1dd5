import { createApp } from "../../lib/app/create-app.ts";
import { parseAllowList, type Resolver } from "../../lib/http/ssrf.ts";
import { createMemoryLogger } from "../../lib/log.ts";
import { openSqliteStore } from "../../lib/store/sqlite/store.ts";
import type { WebhookFields } from "../../lib/webhooks/definition/field-faces.ts";
import type { Store } from "../../lib/webhooks/ports.ts";
import { perTest } from "../fakes/per-test.ts";

export const ORIGIN = "http://localhost";
export const T0 = new Date("2025-03-04T05:06:07.000Z");

/** An app on a fresh in-memory store with a settable clock and counted request ids. */
export function testApp(
  options: {
    adminToken?: string;
    bodyLimitBytes?: number;
    /** WEBHOOK_ALLOWED_HOSTS as the app has it (the webhook form's warnings). */
    webhookAllowList?: string;
    /** Resolves webhook host names for those warnings; default: a global address. */
    resolve?: Resolver;
    /** The webhook fields (default WEBHOOK_FIELDS): a test's table with a row of its own. */
    webhookFields?: WebhookFields;
  } = {},
) {
  const clock = { now: T0 };
  const store: Store = openSqliteStore(":memory:", { now: () => clock.now.getTime() });
  const logger = createMemoryLogger();
  let requests = 0;
  let secrets = 0;
  const app = createApp({
    store,
    config: {
      adminToken: options.adminToken ?? null,
      bodyLimitBytes: options.bodyLimitBytes,
      webhookAllowList: parseAllowList(options.webhookAllowList),
    },
    now: () => clock.now,
    logger,
    randomUUID: () => `00000000-0000-4000-8000-${String(++requests).padStart(12, "0")}`,
    generateSecret: () => `whsec_${Buffer.alloc(24, ++secrets).toString("base64")}`,
    // Webhook host names (for the form's SSRF warnings) resolve to a global address; no DNS.
    resolve: options.resolve ?? (async () => ["93.184.216.34"]),
    webhookFields: options.webhookFields,
  });
  return { app, store, clock, logger, client: createClient(app) };
}

/**
 * The admin's webhook form as a browser posts it: a receiver on 127.0.0.1:9000 for every
 * event, no secret, enabled; `fields` change or add fields.
 */
export function webhookForm(
  fields: Record<string, string | string[]> = {},
): Record<string, string | string[]> {
  return {
    name: "receiver",
    url: "http://127.0.0.1:9000/hook",
    method: "POST",
    contentType: "application/json",
    headers: "",
    events: ["*"],
    secret: "",
    maxPerSecond: "",
    enabled: "on",
    ...fields,
  };
}

/** For a file of tests: a fresh app per test (testApp()), its store closed after it. */
export function useApp(): TestApp {
  return perTest(
    () => testApp(),
    (t) => t.store.close(),
  );
}

/**
 * For a file or describe of API tests: a fresh app per test with ADMIN_TOKEN `token` (closed
 * after it), and `api`, a client sending that token as bearer.
 */
export function useTokenApp(token: string): { readonly t: TestApp; readonly api: Client } {
  return perTest(
    () => {
      const t = testApp({ adminToken: token });
      return { t, api: createClient(t.app, { headers: { authorization: `Bearer ${token}` } }) };
    },
    ({ t }) => t.store.close(),
  );
}

/**
 * For a file of admin tests: a fresh app per test (closed after it) with one webhook, "hook",
 * for every event; `webhookId` is its id.
 */
export function useAppWithWebhook(): { readonly t: TestApp; readonly webhookId: number } {
  return perTest(
    async () => {
      const t = testApp();
      const hook = await t.store.webhooks.create({
        name: "hook",
        url: "http://h.example/",
        events: ["*"],
      });
      return { t, webhookId: hook.id };
    },
    ({ t }) => t.store.close(),
  );
}

/** For a file of tests reading the API's document: a fresh app per test and its /api/openapi.json. */
export function useDocumentedApp<Doc>(): { readonly t: TestApp; readonly doc: Doc } {
  return perTest(
    async () => {
      const t = testApp();
      const doc = (await (await t.app.request("/api/openapi.json")).json()) as Doc;
      return { t, doc };
    },
    ({ t }) => t.store.close(),
  );
}

export type TestApp = ReturnType<typeof testApp>;
export type Client = ReturnType<typeof createClient>;
type Requester = { request(input: string, init?: RequestInit): Response | Promise<Response> };

/**
 * A small browser stand-in for app.request(): keeps cookies, sends the Origin a browser sends,
 * and fills in the CSRF field from the page a form came from.
 */
export function createClient(app: Requester, defaults: { headers?: HeadersInit } = {}) {
  const cookies = new Map<string, string>();

  async function request(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(defaults.headers);
    for (const [key, value] of new Headers(init.headers)) headers.set(key, value);
    if (cookies.size > 0 && !headers.has("cookie")) {
      headers.set("cookie", [...cookies].map(([k, v]) => `${k}=${v}`).join("; "));
    }
    const response = await app.request(path, { ...init, headers, redirect: "manual" });
    for (const line of response.headers.getSetCookie()) {
      const [pair = "", ...attributes] = line.split(";");
      const [name = "", value = ""] = pair.split("=");
      const expired = attributes.some((a) => /max-age=0/i.test(a.trim()));
      if (expired || value === "") cookies.delete(name.trim());
      else cookies.set(name.trim(), value.trim());
    }
    return response;
  }

  /** GETs `page` and returns its HTML and the CSRF token its forms carry. */
  async function open(page: string): Promise<{ response: Response; html: string; csrf: string }> {
    const response = await request(page);
    const html = await response.text();
    const csrf = html.match(/name="_csrf" value="([^"]+)"/)?.[1] ?? "";
    return { response, html, csrf };
  }

  /** Submits a form as a browser would after opening `from` (default: the action itself). */
  async function submit(
    action: string,
    fields: Record<string, string | string[]>,
    options: { from?: string; origin?: string | null; csrf?: string } = {},
  ): Promise<Response> {
    const csrf = options.csrf ?? (await open(options.from ?? "/admin/items/new")).csrf;
    const body = new URLSearchParams();
    body.set("_csrf", csrf);
    for (const [key, value] of Object.entries(fields)) {
      for (const v of Array.isArray(value) ? value : [value]) body.append(key, v);
    }
    const headers: Record<string, string> = {
      "content-type": "application/x-www-form-urlencoded",
    };
    const origin = options.origin === undefined ? ORIGIN : options.origin;
    if (origin !== null) headers.origin = origin;
    return request(action, { method: "POST", headers, body });
  }

  /** A JSON request; a write with no body given sends `{}`, as the API asks of a browser. */
  function json(method: string, path: string, body?: unknown, headers: HeadersInit = {}) {
    const sent = body === undefined && method !== "GET" && method !== "HEAD" ? {} : body;
    return request(path, {
      method,
      headers: { "content-type": "application/json", ...Object.fromEntries(new Headers(headers)) },
      body: sent === undefined ? undefined : JSON.stringify(sent),
    });
  }

  return { request, open, submit, json, cookies };
}
