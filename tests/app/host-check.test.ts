import { afterEach, describe, expect, test } from "bun:test";
import { type ServingApp, serveApp } from "../../lib/app/serve.ts";
import { isAllowedHost, parseAllowedHosts } from "../../lib/http/host-check.ts";
import { createMemoryLogger } from "../../lib/log.ts";
import { openSqliteStore } from "../../lib/store/sqlite/store.ts";
import type { Store } from "../../lib/webhooks/ports.ts";
import { bodyOf, rawHttp, statusOf } from "../fakes/raw-http.ts";

const TOKEN = "test-admin-token-0123456789";

let store: Store;
let serving: ServingApp | undefined;
afterEach(async () => {
  await serving?.stop();
  serving = undefined;
  await store.close();
});

/** The app on a real socket on 127.0.0.1, as `bun run app` serves it. */
function serve(options: { adminToken?: string | null; allowedHosts?: string[] } = {}) {
  store = openSqliteStore(":memory:");
  const logger = createMemoryLogger();
  serving = serveApp({
    host: "127.0.0.1",
    port: 0,
    store,
    adminToken: options.adminToken ?? null,
    allowedHosts: options.allowedHosts,
    logger,
  });
  return { port: Number(new URL(serving.url).port), logger };
}

function get(path: string, host: string | null, extra = ""): string {
  const hostLine = host === null ? "" : `Host: ${host}\r\n`;
  return `GET ${path} HTTP/1.1\r\n${hostLine}${extra}Connection: close\r\n\r\n`;
}

describe("the Host check (DNS rebinding)", () => {
  test("a loopback peer asking for another name gets 421 and no data, with or without a token", async () => {
    for (const adminToken of [null, TOKEN]) {
      const { port } = serve({ adminToken });
      await store.items.create(
        { sku: "S-1", name: "Secret widget", quantity: 1, location: "" },
        new Date(),
      );
      for (const path of ["/api/items", "/admin/items", "/admin/login", "/metrics", "/"]) {
        const response = await rawHttp(port, get(path, `evil.example:${port}`));
        expect(statusOf(response), `${path} ${adminToken}`).toBe(421);
        expect(bodyOf(response)).toContain('does not answer to the name "evil.example"');
        expect(response).not.toContain("Secret widget");
        // Refused before auth: no login redirect, no CSRF cookie, no WWW-Authenticate.
        expect(response).not.toMatch(/set-cookie|location:|www-authenticate/i);
      }
      await serving?.stop();
      serving = undefined;
      await store.close();
    }
    store = openSqliteStore(":memory:");
  });

  test("a rebinding page can not plant a webhook with a form POST", async () => {
    const { port } = serve();
    const form = "name=planted&url=http%3A%2F%2Fevil.example%2F&method=POST&events=*";
    const response = await rawHttp(
      port,
      `POST /admin/webhooks HTTP/1.1\r\nHost: evil.example\r\nOrigin: http://evil.example\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${form.length}\r\nConnection: close\r\n\r\n${form}`,
    );
    expect(statusOf(response)).toBe(421);
    expect(await store.webhooks.list()).toEqual([]);
  });

  test("the app's own names are answered: IPs, localhost, the --host name and APP_ALLOWED_HOSTS", async () => {
    const { port } = serve({ allowedHosts: ["admin.example.com", ".corp.example"] });
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      "LOCALHOST.",
      "app.localhost",
      "[::1]:8000",
      "192.168.1.20",
      "admin.example.com",
      "corp.example",
      "inventory.corp.example:443",
    ]) {
      expect(statusOf(await rawHttp(port, get("/api/items", host))), host).toBe(200);
    }
    for (const host of ["example.com", "admin.example.com.evil.example", "xcorp.example"]) {
      expect(statusOf(await rawHttp(port, get("/api/items", host))), host).toBe(421);
    }
  });

  test("isAllowedHost() tells a name from something that is no host at all", () => {
    const allowed = parseAllowedHosts(".example.com", "APP_ALLOWED_HOSTS");
    expect(isAllowedHost("a.b.example.com:80", allowed)).toBe(true);
    expect(isAllowedHost("example.org", allowed)).toBe(false);
    for (const bad of ["", "a b", "evil.example/x", "[::1", "[zz::1]", "é.example"]) {
      expect(isAllowedHost(bad, allowed), bad).toBeNull();
    }
  });
});

describe("malformed requests get 400, never 500", () => {
  test("HTTP/1.0 without Host gets 400 and no stack trace in the log", async () => {
    const { port, logger } = serve({ adminToken: TOKEN });
    for (const path of ["/admin/login", "/api/items", "/"]) {
      const response = await rawHttp(port, `GET ${path} HTTP/1.0\r\n\r\n`);
      expect(statusOf(response), path).toBe(400);
      expect(bodyOf(response)).toBe("Bad request: a valid Host header is required.\n");
    }
    expect(logger.lines.filter((line) => line.startsWith("error"))).toEqual([]);
  });

  test("a form body that does not parse gets 400, not 500 with the error logged", async () => {
    const { port, logger } = serve({ adminToken: TOKEN });
    const body = "--abc\r\nxx\r\n";
    const response = await rawHttp(
      port,
      `POST /admin/login HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nOrigin: http://127.0.0.1:${port}\r\nContent-Type: multipart/form-data; boundary=xyz\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    );
    expect(statusOf(response)).toBe(400);
    expect(bodyOf(response)).toBe("Bad request: the form could not be read.\n");
    expect(logger.lines.filter((line) => line.startsWith("error"))).toEqual([]);
  });

  test("a Host header that is no host name gets 400", async () => {
    const { port } = serve();
    expect(statusOf(await rawHttp(port, get("/api/items", "bad_host!:x")))).toBe(400);
  });
});
