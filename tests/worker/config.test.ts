import { describe, expect, test } from "bun:test";
import {
  loadDatabaseTarget,
  loadWorkerConfig,
  loadWorkerMetrics,
} from "../../lib/worker/config.ts";
import { configErrorOf } from "../fakes/config-error.ts";

describe("loadWorkerConfig", () => {
  test("loadWorkerConfig() defaults: 10 s timeout, attempts by schedule, 16 in flight and 64 ready, lease = timeout + 30 s", () => {
    expect(loadWorkerConfig({})).toEqual({
      database: { kind: "sqlite", path: "data/app.db" },
      timeoutMs: 10_000,
      maxAttempts: null,
      concurrency: 16,
      prefetch: 64,
      leaseMs: 40_000,
      shutdownGraceMs: 15_000,
      retryBaseMs: 10_000,
      retryMaxMs: 3_600_000,
      pollMs: 50,
      allowList: [],
      proxy: null,
    });
  });

  test("loadWorkerConfig() reads the environment and lets flags override it", () => {
    const config = loadWorkerConfig(
      {
        DATABASE_URL: "sqlite:/tmp/x.db",
        WEBHOOK_TIMEOUT_MS: "2000",
        WEBHOOK_MAX_ATTEMPTS: "1",
        WEBHOOK_CONCURRENCY: "4",
        WEBHOOK_ALLOWED_HOSTS: "127.0.0.1:9000",
        WEBHOOK_POLL_MS: "",
      },
      { concurrency: "32", "lease-ms": "5000" },
    );
    expect(config).toMatchObject({
      database: { kind: "sqlite", path: "/tmp/x.db" },
      timeoutMs: 2000,
      maxAttempts: 1,
      concurrency: 32,
      leaseMs: 5000,
      pollMs: 50,
    });
    expect(config.allowList).toHaveLength(1);
  });

  test("loadWorkerConfig() follows a longer timeout with a longer default lease", () => {
    expect(loadWorkerConfig({ WEBHOOK_TIMEOUT_MS: "60000" }).leaseMs).toBe(90_000);
  });

  test("loadWorkerConfig() holds four times as many claims ready as in flight unless told otherwise", () => {
    expect(loadWorkerConfig({}, { concurrency: "4" }).prefetch).toBe(16);
    expect(loadWorkerConfig({ WEBHOOK_CONCURRENCY: "64" }).prefetch).toBe(256);
    expect(loadWorkerConfig({ WEBHOOK_CONCURRENCY: "1024" }).prefetch).toBe(1024);
    expect(loadWorkerConfig({ WEBHOOK_PREFETCH: "0" }, { concurrency: "8" }).prefetch).toBe(0);
  });

  test.each([
    [
      { WEBHOOK_TIMEOUT_MS: "ten" },
      {},
      'WEBHOOK_TIMEOUT_MS="ten" is invalid: expected a whole number from 100 to 300000',
    ],
    [
      { WEBHOOK_MAX_ATTEMPTS: "0" },
      {},
      'WEBHOOK_MAX_ATTEMPTS="0" is invalid: expected a whole number from 1 to 100',
    ],
    [
      {},
      { concurrency: "0" },
      '--concurrency="0" is invalid: expected a whole number from 1 to 1024',
    ],
    [
      {},
      { concurrency: true },
      "--concurrency needs a value: expected a whole number from 1 to 1024",
    ],
    [{ WEBHOOK_ALLOWED_HOSTS: "exa mple" }, {}, "WEBHOOK_ALLOWED_HOSTS entry"],
    [{ DATABASE_URL: "mysql://x/y" }, {}, 'DATABASE_URL="mysql://x/y" is invalid'],
    [{}, { "database-url": "mysql://x/y" }, '--database-url="mysql://x/y" is invalid'],
    [
      { WEBHOOK_TIMEOUT_MS: "5000", WEBHOOK_LEASE_MS: "5000" },
      {},
      "WEBHOOK_LEASE_MS=5000 is invalid: expected at least the timeout + 1000 (6000)",
    ],
    [{}, { "timeout-ms": "5000", "lease-ms": "2000" }, "--lease-ms=2000 is invalid"],
    [
      { WEBHOOK_RETRY_BASE_MS: "60000", WEBHOOK_RETRY_MAX_MS: "1000" },
      {},
      "WEBHOOK_RETRY_MAX_MS=1000 is invalid",
    ],
  ])("loadWorkerConfig(%o, %o) throws one line: %s", (env, flags, message) => {
    const said = configErrorOf(() => loadWorkerConfig(env, flags));
    expect(said).toContain(message);
    expect(said).not.toContain("\n");
  });
});

describe("loadDatabaseTarget", () => {
  test("loadDatabaseTarget() reads DATABASE_URL, a flag wins", () => {
    expect(loadDatabaseTarget({})).toEqual({ kind: "sqlite", path: "data/app.db" });
    expect(loadDatabaseTarget({ DATABASE_URL: "postgres://u@h/db" })).toEqual({
      kind: "postgres",
      url: "postgres://u@h/db",
    });
    expect(loadDatabaseTarget({ DATABASE_URL: "a.db" }, { "database-url": "b.db" })).toEqual({
      kind: "sqlite",
      path: "b.db",
    });
  });
});

describe("connection budget", () => {
  test("loadDatabaseTarget() takes the URL's max=, else DATABASE_POOL_MAX", () => {
    expect(loadDatabaseTarget({ DATABASE_URL: "postgres://u@h/db?max=3" })).toEqual({
      kind: "postgres",
      url: "postgres://u@h/db?max=3",
      poolMax: 3,
    });
    expect(
      loadDatabaseTarget({ DATABASE_URL: "postgres://u@h/db", DATABASE_POOL_MAX: "6" }),
    ).toMatchObject({ poolMax: 6 });
    expect(
      loadDatabaseTarget({ DATABASE_URL: "postgres://u@h/db?max=2", DATABASE_POOL_MAX: "6" }),
    ).toMatchObject({ poolMax: 2 });
    expect(loadDatabaseTarget({ DATABASE_URL: "postgres://u@h/db" })).not.toHaveProperty("poolMax");
  });

  test("a bad budget is one line naming the value and the expected form", () => {
    for (const [env, message] of [
      [{ DATABASE_POOL_MAX: "0" }, 'DATABASE_POOL_MAX="0" is invalid: expected a whole number'],
      [{ DATABASE_POOL_MAX: "lots", DATABASE_URL: "x.db" }, 'DATABASE_POOL_MAX="lots"'],
      [{ DATABASE_URL: "postgres://u@h/db?max=-1" }, 'DATABASE_URL max="-1" is invalid'],
    ] as const) {
      const said = configErrorOf(() => loadDatabaseTarget(env));
      expect(said).toContain(message);
      expect(said).not.toContain("\n");
    }
  });
});

describe("loadWorkerMetrics", () => {
  const TOKEN = "test-admin-token-0123456789";

  test("loadWorkerMetrics() is null without --metrics-port, loopback by default with it", () => {
    expect(loadWorkerMetrics({})).toBeNull();
    expect(loadWorkerMetrics({}, { "metrics-port": "9464" })).toEqual({
      host: "127.0.0.1",
      port: 9464,
      adminToken: null,
      allowedHosts: [],
    });
    expect(
      loadWorkerMetrics(
        { ADMIN_TOKEN: TOKEN, WORKER_METRICS_ALLOWED_HOSTS: "Worker1.example, .corp.example" },
        { "metrics-port": "0", "metrics-host": "[::]" },
      ),
    ).toEqual({
      host: "::",
      port: 0,
      adminToken: TOKEN,
      allowedHosts: ["worker1.example", ".corp.example"],
    });
  });

  test.each([
    [{}, { "metrics-port": "9464", "metrics-host": "0.0.0.0" }, "ADMIN_TOKEN is required"],
    [{}, { "metrics-host": "127.0.0.1" }, "--metrics-host needs --metrics-port"],
    [{}, { "metrics-port": "http" }, '--metrics-port="http" is invalid'],
    [{}, { "metrics-port": "70000" }, "expected a whole number from 0 to 65535"],
    [
      { WORKER_METRICS_ALLOWED_HOSTS: "w1.example:9464" },
      { "metrics-port": "1" },
      'WORKER_METRICS_ALLOWED_HOSTS entry "w1.example:9464" is invalid',
    ],
    [{}, { "metrics-port": "" }, "--metrics-port needs a value"],
    [{ ADMIN_TOKEN: "short" }, { "metrics-port": "1" }, "ADMIN_TOKEN"],
  ])("loadWorkerMetrics(%j, %j) is refused in one line: %s", (env, flags, message) => {
    const said = configErrorOf(() => loadWorkerMetrics(env, flags));
    expect(said).toContain(message);
    expect(said).not.toContain("\n");
  });
});
