import { afterEach, describe, expect, test } from "bun:test";
import { SESSION_COOKIE } from "../../lib/app/auth/session.ts";
import { createApp } from "../../lib/app/create-app.ts";
import { createMemoryLogger } from "../../lib/log.ts";
import type { Store } from "../../lib/webhooks/ports.ts";
import { createClient, testApp } from "./harness.ts";

const TOKEN = "test-admin-token-0123456789";
const item = { sku: "W-1", name: "Widget", quantity: 1 };

let t: ReturnType<typeof testApp>;
afterEach(() => t.store.close());

describe("CSRF", () => {
  test("a form POST without Origin or Sec-Fetch-Site is refused", async () => {
    t = testApp();
    const response = await t.client.submit(
      "/admin/items",
      { ...item, quantity: "1" },
      { origin: null },
    );
    expect(response.status).toBe(403);
    expect(await t.store.items.count()).toBe(0);
  });

  test("a form POST from another origin is refused even with a valid token", async () => {
    t = testApp();
    const response = await t.client.submit(
      "/admin/items",
      { ...item, quantity: "1" },
      { origin: "https://evil.example" },
    );
    expect(response.status).toBe(403);
    expect(await t.store.items.count()).toBe(0);
  });

  test("a same-origin POST without the token, or with another browser's, is refused", async () => {
    t = testApp();
    const other = createClient(t.app);
    const { csrf: othersToken } = await other.open("/admin/items/new");
    for (const csrf of ["", othersToken, "x".repeat(43)]) {
      const response = await t.client.submit("/admin/items", { ...item, quantity: "1" }, { csrf });
      expect(response.status).toBe(403);
    }
    expect(await t.store.items.count()).toBe(0);
  });

  test("the CSRF cookie is HttpOnly and SameSite=Strict", async () => {
    t = testApp();
    const response = await t.client.request("/admin/items");
    const cookie = response.headers.getSetCookie().find((c) => c.startsWith("admin_csrf="));
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Strict");
  });
});

describe("without ADMIN_TOKEN", () => {
  test("API and admin are open and changes are made by anonymous", async () => {
    t = testApp();
    expect((await t.client.json("POST", "/api/items", item)).status).toBe(201);
    const [delivery] = await t.store.queue.list({});
    expect(delivery).toBeUndefined(); // no webhook yet: nothing queued
    expect((await t.client.request("/admin/background-tasks")).status).toBe(200);
    expect((await t.client.request("/admin/login")).headers.get("location")).toBe("/admin");
  });
});

describe("with ADMIN_TOKEN", () => {
  test("the API answers 401 without the token, or with a wrong one", async () => {
    t = testApp({ adminToken: TOKEN });
    const none = await t.client.json("POST", "/api/items", item);
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toContain("Bearer");
    const wrong = await t.client.json("GET", "/api/items", undefined, {
      authorization: `Bearer ${TOKEN}x`,
    });
    expect(wrong.status).toBe(401);
    expect(await t.store.items.count()).toBe(0);
  });

  test("the API accepts the bearer token and records the admin as the user", async () => {
    t = testApp({ adminToken: TOKEN });
    await t.store.webhooks.create({ name: "all", url: "http://h.example/", events: ["*"] });
    const response = await t.client.json("POST", "/api/items", item, {
      authorization: `Bearer ${TOKEN}`,
    });
    expect(response.status).toBe(201);
    const [delivery] = await t.store.queue.list({});
    expect(JSON.parse(delivery?.payload ?? "{}").username).toBe("admin");
  });

  test("admin pages send the browser to the login form, keeping where it was going", async () => {
    t = testApp({ adminToken: TOKEN });
    const response = await t.client.request("/admin/items?page=2");
    expect(response.status).toBe(302);
    expect(response.headers.get("location")).toBe(
      `/admin/login?next=${encodeURIComponent("/admin/items?page=2")}`,
    );
    const post = await t.client.submit(
      "/admin/items",
      { ...item, quantity: "1" },
      {
        from: "/admin/login",
      },
    );
    expect(post.status).toBe(401);
  });

  test("a wrong token on the login form is refused with 401 and no session", async () => {
    t = testApp({ adminToken: TOKEN });
    const response = await t.client.submit(
      "/admin/login",
      { token: "nope", next: "/admin/items" },
      { from: "/admin/login" },
    );
    expect(response.status).toBe(401);
    expect(t.client.cookies.has(SESSION_COOKIE)).toBe(false);
  });

  test("logging in sets an HttpOnly SameSite=Strict cookie that opens admin and API", async () => {
    t = testApp({ adminToken: TOKEN });
    const response = await t.client.submit(
      "/admin/login",
      { token: TOKEN, next: "/admin/items" },
      { from: "/admin/login" },
    );
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe("/admin/items");
    const cookie = response.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`));
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Strict");
    const page = await t.client.open("/admin/items");
    expect(page.response.status).toBe(200);
    expect(page.html).toContain("Log out");
    expect((await t.client.request("/api/items")).status).toBe(200);
    expect((await t.client.submit("/admin/items", { ...item, quantity: "1" })).status).toBe(303);
  });

  test("a tampered or foreign session cookie is refused", async () => {
    t = testApp({ adminToken: TOKEN });
    await t.client.submit("/admin/login", { token: TOKEN }, { from: "/admin/login" });
    const value = t.client.cookies.get(SESSION_COOKIE) ?? "";
    const tampered = `${value.slice(0, -2)}${value.endsWith("A") ? "BB" : "AA"}`;
    t.client.cookies.set(SESSION_COOKIE, tampered);
    expect((await t.client.request("/api/items")).status).toBe(401);
    const other = testApp({ adminToken: `${TOKEN}-other` });
    const foreign = createClient(other.app);
    foreign.cookies.set(SESSION_COOKIE, value);
    expect((await foreign.request("/api/items")).status).toBe(401);
    other.store.close();
  });

  /** A login posted with `next`: where it sends the browser. */
  async function loginWithNext(next: string) {
    t = testApp({ adminToken: TOKEN });
    return t.client.submit("/admin/login", { token: TOKEN, next }, { from: "/admin/login" });
  }

  test.each(["//evil.example/", "https://evil.example/admin", "/admin\\@evil"])(
    "login never redirects off the admin: next=%s goes to /admin",
    async (next) => {
      const response = await loginWithNext(next);
      expect(response.headers.get("location")).toBe("/admin");
    },
  );

  test.each(["/admin/items\r\nSet-Cookie: x=1", "/admin/items\n", "/admin/日本"])(
    "a CR, LF or non-ASCII character in next falls back to /admin instead of a 500: %j",
    async (next) => {
      const response = await loginWithNext(next);
      expect(response.status).toBe(303);
      expect(response.headers.get("location")).toBe("/admin");
      expect(response.headers.has("x")).toBe(false);
    },
  );

  test("the login page keeps only a safe next", async () => {
    t = testApp({ adminToken: TOKEN });
    const page = await t.client.open(`/admin/login?next=${encodeURIComponent("/admin\r\nX: 1")}`);
    expect(page.response.status).toBe(200);
    expect(page.html).toContain('name="next" value="/admin"');
  });

  test("logging out removes the session", async () => {
    t = testApp({ adminToken: TOKEN });
    await t.client.submit("/admin/login", { token: TOKEN }, { from: "/admin/login" });
    const response = await t.client.submit("/admin/logout", {}, { from: "/admin/items" });
    expect(response.headers.get("location")).toBe("/admin/login");
    expect(t.client.cookies.has(SESSION_COOKIE)).toBe(false);
    expect((await t.client.request("/admin/items")).status).toBe(302);
  });
});

test("admin pages are not cached", async () => {
  t = testApp();
  const response = await t.client.request("/admin/items");
  expect(response.headers.get("cache-control")).toBe("no-store");
});

test("an unexpected error answers 500 naming the request id and logs it, without details", async () => {
  t = testApp();
  const logger = createMemoryLogger();
  const broken: Store = {
    ...t.store,
    items: {
      ...t.store.items,
      count: async () => {
        throw new Error("database is gone");
      },
    },
  };
  const app = createApp({ store: broken, logger });
  const page = await app.request("/admin/items");
  expect(page.status).toBe(500);
  const requestId = page.headers.get("x-request-id") ?? "missing";
  const text = await page.text();
  expect(text).toContain(requestId);
  expect(text).not.toContain("database is gone");
  const api = await app.request("/api/items");
  expect(api.status).toBe(500);
  expect((await api.json()).error).toContain("request id");
  expect(logger.lines[0]).toContain(`GET /admin/items failed (request ${requestId})`);
  expect(logger.lines[0]).toContain("database is gone");
});
