import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SESSION_COOKIE } from "../../lib/app/auth/session.ts";
import { createApp } from "../../lib/app/create-app.ts";
import { serveApp } from "../../lib/app/serve.ts";
import { clientKey, createLoginThrottle } from "../../lib/http/token-throttle.ts";
import { createMemoryLogger } from "../../lib/log.ts";
import { openSqliteStore } from "../../lib/store/sqlite/store.ts";
import { createClient, T0, testApp } from "./harness.ts";

const TOKEN = "test-admin-token-0123456789";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function app() {
  const t = testApp({ adminToken: TOKEN });
  cleanups.push(() => t.store.close());
  return t;
}

/** A browser at `address`: the app reads the peer from Bun's server.requestIP, as served. */
function clientAt(t: ReturnType<typeof testApp>, address: string) {
  const peer = { requestIP: () => ({ address }) };
  return createClient({ request: (input, init) => t.app.request(input, init, peer) });
}

function login(client: ReturnType<typeof createClient>, token: string) {
  return client.submit("/admin/login", { token, next: "/admin/items" }, { from: "/admin/login" });
}

describe("login throttling", () => {
  test("five wrong tokens are free, then each locks the client out twice as long; failures are logged", async () => {
    const t = app();
    const browser = clientAt(t, "::ffff:198.51.100.7");
    for (let i = 0; i < 5; i++) expect((await login(browser, "wrong")).status).toBe(401);
    expect((await login(browser, "wrong")).status).toBe(401); // the 6th: locked for 1 s
    const locked = await login(browser, TOKEN);
    expect(locked.status).toBe(429);
    expect(locked.headers.get("retry-after")).toBe("1");
    expect(await locked.text()).toContain(
      "Too many wrong tokens from your address: try again in 1 s.",
    );
    expect(browser.cookies.has(SESSION_COOKIE)).toBe(false);

    t.clock.now = new Date(T0.getTime() + 1000);
    expect((await login(browser, "wrong")).status).toBe(401); // the 7th: locked for 2 s
    t.clock.now = new Date(T0.getTime() + 2500);
    expect((await login(browser, TOKEN)).status).toBe(429);
    t.clock.now = new Date(T0.getTime() + 3000);
    expect((await login(browser, TOKEN)).status).toBe(303);
    expect(browser.cookies.has(SESSION_COOKIE)).toBe(true);

    const warnings = t.logger.lines.filter((line) => line.startsWith("warn Wrong admin"));
    expect(warnings).toHaveLength(7);
    expect(warnings[0]).toBe(
      "warn Wrong admin token on the login form from 198.51.100.7 (1 in a row)",
    );
    expect(warnings[5]).toBe(
      "warn Wrong admin token on the login form from 198.51.100.7 (6 in a row; further tries refused for 1 s)",
    );
    expect(warnings[6]).toEndWith("(7 in a row; further tries refused for 2 s)");
  });

  test("one client's lockout leaves another address alone", async () => {
    const t = app();
    const attacker = clientAt(t, "203.0.113.5");
    for (let i = 0; i < 8; i++) await login(attacker, "wrong");
    expect((await login(attacker, TOKEN)).status).toBe(429);
    expect((await login(clientAt(t, "203.0.113.6"), TOKEN)).status).toBe(303);
  });

  test("wrong bearer tokens count too, and a locked client's right token is refused with 429", async () => {
    const t = app();
    const api = clientAt(t, "2001:db8:1:2::10");
    const bearer = (token: string) =>
      api.request("/api/items", { headers: { authorization: `Bearer ${token}` } });
    for (let i = 0; i < 6; i++) expect((await bearer("wrong")).status).toBe(401);
    // Another address in the same /64 is the same client.
    const neighbour = clientAt(t, "2001:db8:1:2::99");
    const response = await neighbour.request("/api/items", {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(response.status).toBe(429);
    expect(response.headers.get("retry-after")).toBe("1");
    expect(await response.json()).toEqual({
      error: "Too many wrong tokens from this address: try again in 1 s",
    });
    expect(t.logger.lines).toContain(
      "warn Wrong admin bearer token from 2001:db8:1:2::/64 (6 in a row; further tries refused for 1 s)",
    );
    // Another scheme is no try at the token: a Basic header from a proxy is not counted.
    const other = clientAt(t, "192.0.2.1");
    for (let i = 0; i < 10; i++) {
      await other.request("/api/items", { headers: { authorization: "Basic dTpw" } });
    }
    expect(
      (await other.request("/api/items", { headers: { authorization: `Bearer ${TOKEN}` } })).status,
    ).toBe(200);
  });

  test("the served app throttles by the socket's peer address", async () => {
    const logger = createMemoryLogger();
    const store = openSqliteStore(":memory:");
    const serving = serveApp({ host: "127.0.0.1", port: 0, store, adminToken: TOKEN, logger });
    cleanups.push(() => store.close());
    cleanups.push(() => serving.stop());
    await fetch(`${serving.url}/api/items`, { headers: { authorization: "Bearer wrong" } });
    expect(logger.lines).toEqual(["warn Wrong admin bearer token from 127.0.0.1 (1 in a row)"]);
  });
});

describe("createLoginThrottle()", () => {
  test("doubles up to the cap and forgets a quiet client", () => {
    const throttle = createLoginThrottle({
      freeFailures: 1,
      firstLockMs: 100,
      maxLockMs: 350,
      forgetAfterMs: 10_000,
    });
    expect(throttle.failed("a", 0)).toEqual({ failures: 1, lockedMs: 0 });
    expect(throttle.waitMs("a", 0)).toBe(0);
    expect([2, 3, 4, 5].map(() => throttle.failed("a", 0).lockedMs)).toEqual([100, 200, 350, 350]);
    expect(throttle.waitMs("a", 100)).toBe(250);
    expect(throttle.failed("a", 20_000)).toEqual({ failures: 1, lockedMs: 0 });
  });

  test("a credential that was right before is looked at through a lockout; others wait, the count stays", () => {
    const throttle = createLoginThrottle({
      freeFailures: 0,
      firstLockMs: 1000,
      rememberRightMs: 60_000,
    });
    throttle.succeeded("right-token", 0);
    expect(throttle.failed("a", 0)).toEqual({ failures: 1, lockedMs: 1000 });
    expect(throttle.waitMs("a", 0)).toBe(1000);
    expect(throttle.waitMs("a", 0, "a-guess")).toBe(1000);
    expect(throttle.waitMs("a", 0, "right-token")).toBe(0);
    // A right request does not forgive the address: a guesser behind it gets no free tries.
    throttle.succeeded("right-token", 500);
    expect(throttle.failed("a", 1000)).toEqual({ failures: 2, lockedMs: 2000 });
    // Unused for longer than rememberRightMs, it waits like any other.
    expect(throttle.waitMs("a", 2000, "right-token")).toBe(0);
    throttle.failed("a", 70_000);
    expect(throttle.waitMs("a", 70_000, "right-token")).toBeGreaterThan(0);
  });

  test("remembers at most maxClients, dropping the least recently failed", () => {
    const throttle = createLoginThrottle({ freeFailures: 0, maxClients: 2 });
    throttle.failed("a", 0);
    throttle.failed("b", 0);
    throttle.failed("a", 0);
    throttle.failed("c", 0);
    expect(throttle.waitMs("b", 0)).toBe(0);
    expect(throttle.waitMs("a", 0)).toBeGreaterThan(0);
    expect(throttle.waitMs("c", 0)).toBeGreaterThan(0);
  });

  test("clientKey() reads IPv4, IPv4-mapped IPv6 and IPv6 by its /64", () => {
    expect(clientKey("::ffff:127.0.0.1")).toBe("127.0.0.1");
    expect(clientKey("10.1.2.3")).toBe("10.1.2.3");
    expect(clientKey("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(clientKey(undefined)).toBe("unknown");
    expect(clientKey("nonsense")).toBe("unknown");
  });
});

describe("logout", () => {
  test("a logged-out session cookie is refused even when the browser keeps it", async () => {
    const t = app();
    await login(t.client, TOKEN);
    const cookie = t.client.cookies.get(SESSION_COOKIE) ?? "";
    expect((await t.client.request("/api/items")).status).toBe(200);
    await t.client.submit("/admin/logout", {}, { from: "/admin/items" });
    t.client.cookies.set(SESSION_COOKIE, cookie);
    expect((await t.client.request("/api/items")).status).toBe(401);
    expect((await t.client.request("/admin/items")).headers.get("location")).toStartWith(
      "/admin/login",
    );
    // Logging in again gives a new session that works.
    await login(t.client, TOKEN);
    expect((await t.client.request("/api/items")).status).toBe(200);
  });

  test("a logout in one app process ends the session in another on the same database", async () => {
    const dir = mkdtempSync(join(tmpdir(), "logout-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, "app.db");
    const processes = [0, 1].map(() => {
      const store = openSqliteStore(path);
      cleanups.push(() => store.close());
      return createApp({ store, config: { adminToken: TOKEN }, logger: createMemoryLogger() });
    });
    const [first, second] = processes as [(typeof processes)[0], (typeof processes)[0]];
    const browser = createClient(first);
    await login(browser, TOKEN);
    const cookie = browser.cookies.get(SESSION_COOKIE) ?? "";
    const elsewhere = createClient(second);
    elsewhere.cookies.set(SESSION_COOKIE, cookie);
    expect((await elsewhere.request("/api/items")).status).toBe(200);
    await elsewhere.submit("/admin/logout", {}, { from: "/admin/items" });
    expect((await browser.request("/api/items")).status).toBe(401);
  });
});
