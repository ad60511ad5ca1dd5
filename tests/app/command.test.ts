import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCommand } from "citty";
import { createAppCommand } from "../../lib/app/command.ts";
import { ConfigError } from "../../lib/config/errors.ts";
import { createMemoryLogger } from "../../lib/log.ts";
import { openSqliteStore } from "../../lib/store/sqlite/store.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

test("`app` serves the API and admin on the given port until stopped", async () => {
  const dir = mkdtempSync(join(tmpdir(), "app-command-"));
  dirs.push(dir);
  const logger = createMemoryLogger();
  let answers: number[] = [];
  const command = createAppCommand({
    env: { DATABASE_URL: join(dir, "app.db") },
    logger,
    // Runs while the app serves: the start line names the real address.
    async untilStopped() {
      const url = logger.lines[0]?.match(/on (http:\/\/127\.0\.0\.1:\d+);/)?.[1];
      const api = await fetch(`${url}/api/items`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ sku: "A", name: "a", quantity: 1 }),
      });
      const admin = await fetch(`${url}/admin/items`);
      answers = [api.status, admin.status];
    },
  });
  await runCommand(command, { rawArgs: ["--port", "0"] });
  expect(answers).toEqual([201, 200]);
  expect(logger.lines[1]).toBe(
    "info Open, for development (no ADMIN_TOKEN, no API token, loopback only): anyone who can reach this port can change items and webhooks; set ADMIN_TOKEN to protect it",
  );
  expect(logger.lines.at(-1)).toBe("info Stopping");
});

test("the start line says the mode: protected with ADMIN_TOKEN; API tokens only, the admin open", async () => {
  const dir = mkdtempSync(join(tmpdir(), "app-command-"));
  dirs.push(dir);
  const path = join(dir, "app.db");
  const store = openSqliteStore(path);
  await store.tokens.create({
    name: "monitor",
    hash: "0".repeat(64),
    write: false,
    expiresAt: null,
  });
  await store.close();
  const modeLine = async (env: Record<string, string>) => {
    const logger = createMemoryLogger();
    const command = createAppCommand({ env, logger, untilStopped: async () => {} });
    await runCommand(command, { rawArgs: ["--port", "0"] });
    const url = logger.lines[0]?.match(/on (http:\/\/127\.0\.0\.1:\d+);/)?.[1] ?? "";
    return logger.lines[1]?.replaceAll(url, "URL");
  };
  expect(await modeLine({ DATABASE_URL: path })).toBe(
    "info No ADMIN_TOKEN: the API and /metrics need an API token, but the admin at URL/admin is open: anyone who can reach this port can change webhooks there; set ADMIN_TOKEN to protect it",
  );
  expect(await modeLine({ DATABASE_URL: path, ADMIN_TOKEN: "command-test-admin-token" })).toBe(
    "info Protected: the API, the admin and /metrics need ADMIN_TOKEN (Authorization: Bearer, or the login form at URL/admin/login) or an API token",
  );
});

test("`app --host 0.0.0.0` without ADMIN_TOKEN refuses to start", async () => {
  let started = false;
  const command = createAppCommand({
    env: {},
    logger: createMemoryLogger(),
    untilStopped: async () => {
      started = true;
    },
  });
  await expect(runCommand(command, { rawArgs: ["--host", "0.0.0.0"] })).rejects.toBeInstanceOf(
    ConfigError,
  );
  expect(started).toBe(false);
});

test("a taken port is a ConfigError naming it", async () => {
  using taken = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const dir = mkdtempSync(join(tmpdir(), "app-command-"));
  dirs.push(dir);
  const command = createAppCommand({
    env: { DATABASE_URL: join(dir, "app.db") },
    logger: createMemoryLogger(),
    untilStopped: async () => {},
  });
  await expect(runCommand(command, { rawArgs: ["--port", String(taken.port)] })).rejects.toThrow(
    `--port=${taken.port} is in use`,
  );
});
