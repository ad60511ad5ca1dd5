import { describe, expect, test } from "bun:test";
import { loadAppConfig } from "../../lib/app/config.ts";
import { ConfigError } from "../../lib/config/errors.ts";
import { isLoopbackHost } from "../../lib/http/listen.ts";

const TOKEN = "0123456789abcdef0123";

describe("loadAppConfig()", () => {
  test("defaults to 127.0.0.1:8000 without a token and data/app.db", () => {
    expect(loadAppConfig({})).toEqual({
      host: "127.0.0.1",
      port: 8000,
      adminToken: null,
      database: { kind: "sqlite", path: "data/app.db" },
      allowedHosts: [],
      webhookAllowList: [],
      maxAttempts: null,
    });
  });

  test("reads WEBHOOK_MAX_ATTEMPTS (the workers' cap) for Background Tasks; a bad one is exit 2", () => {
    expect(loadAppConfig({ WEBHOOK_MAX_ATTEMPTS: "4" }).maxAttempts).toBe(4);
    expect(() => loadAppConfig({ WEBHOOK_MAX_ATTEMPTS: "0" })).toThrow(
      'WEBHOOK_MAX_ATTEMPTS="0" is invalid',
    );
  });

  test("reads WEBHOOK_ALLOWED_HOSTS (the workers' setting) for the webhook form's warnings", () => {
    const config = loadAppConfig({ WEBHOOK_ALLOWED_HOSTS: "localhost:9000" });
    expect(config.webhookAllowList).toEqual([{ kind: "host", host: "localhost", port: 9000 }]);
    expect(() => loadAppConfig({ WEBHOOK_ALLOWED_HOSTS: "a b" })).toThrow(ConfigError);
  });

  test("reads APP_ALLOWED_HOSTS as names, refusing one with a port in one line", () => {
    const config = loadAppConfig({ APP_ALLOWED_HOSTS: " Admin.Example.com , .corp.example., " });
    expect(config.allowedHosts).toEqual(["admin.example.com", ".corp.example"]);
    expect(() => loadAppConfig({ APP_ALLOWED_HOSTS: "admin.example.com:8000" })).toThrow(
      'APP_ALLOWED_HOSTS entry "admin.example.com:8000" is invalid: expected host names without ports',
    );
  });

  test("takes --host, --port, ADMIN_TOKEN and DATABASE_URL", () => {
    const config = loadAppConfig(
      { ADMIN_TOKEN: TOKEN, DATABASE_URL: "sqlite:/tmp/x.db" },
      { host: "0.0.0.0", port: "8080" },
    );
    expect(config).toMatchObject({ host: "0.0.0.0", port: 8080, adminToken: TOKEN });
    expect(config.database).toEqual({ kind: "sqlite", path: "/tmp/x.db" });
  });

  test("refuses a non-loopback address without ADMIN_TOKEN, naming what to set", () => {
    expect(() => loadAppConfig({}, { host: "0.0.0.0" })).toThrow(ConfigError);
    expect(() => loadAppConfig({ ADMIN_TOKEN: "  " }, { host: "192.168.1.5" })).toThrow(
      /--host=192.168.1.5 is not a loopback address, so ADMIN_TOKEN is required/,
    );
  });

  test("rejects a short token and a bad port in one line", () => {
    expect(() => loadAppConfig({ ADMIN_TOKEN: "short" })).toThrow(
      "ADMIN_TOKEN is invalid: it is 5 characters long: expected at least 16 characters",
    );
    // The token itself is never echoed, not even a wrong one: it may be nearly right.
    const spaced = "a-secret-token with-a-space-in-it";
    expect(() => loadAppConfig({ ADMIN_TOKEN: spaced })).toThrow(
      "ADMIN_TOKEN is invalid: it contains whitespace: expected at least 16 characters",
    );
    try {
      loadAppConfig({ ADMIN_TOKEN: spaced });
    } catch (error) {
      expect((error as Error).message).not.toContain("secret-token");
    }
    for (const port of ["abc", "70000", "-1", "80.5"]) {
      expect(() => loadAppConfig({}, { port })).toThrow(
        `--port=${JSON.stringify(port)} is invalid: expected a whole number from 0 to 65535`,
      );
    }
  });
});

describe("isLoopbackHost()", () => {
  test.each([
    ["127.0.0.1", true],
    ["127.8.9.10", true],
    ["localhost", true],
    ["::1", true],
    ["[::1]", true],
    ["::ffff:127.0.0.1", true],
    ["0.0.0.0", false],
    ["::", false],
    ["10.0.0.1", false],
    ["example.com", false],
  ])("%s → %p", (host, expected) => {
    expect(isLoopbackHost(host)).toBe(expected);
  });
});
