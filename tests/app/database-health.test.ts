/**
 * The app's health checks and what it does when its database cannot take writes: /healthz and
 * /readyz, a 503 (not a 500 with an error id) logged once for a full disk, and a refusal at start
 * of a database this user may only read, which SQLite opens read-only without a word.
 */

import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateApiToken, hashApiToken } from "../../lib/app/auth/api-tokens.ts";
import { createApp } from "../../lib/app/create-app.ts";
import { createMemoryLogger } from "../../lib/log.ts";
import { openSqliteStore } from "../../lib/store/sqlite/store.ts";
import { outputOf } from "../fakes/process-output.ts";
import { testApp } from "./harness.ts";

// The start-up case runs the app script as another user: seconds on a loaded machine.
setDefaultTimeout(60_000);

const ROOT = join(import.meta.dir, "..", "..");
const isRoot = process.getuid?.() === 0;

describe("GET /healthz and /readyz", () => {
  test("answer without credentials: alive, and ready on a database that takes writes", async () => {
    const t = testApp({ adminToken: "health-test-admin-token-0123" });
    const alive = await t.app.request("/healthz");
    expect(alive.status).toBe(200);
    expect(await alive.json()).toEqual({ status: "alive" });
    const ready = await t.app.request("/readyz");
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: "ready" });
    // The API itself still wants the token.
    expect((await t.app.request("/api/items")).status).toBe(401);
    t.store.close();
  });
});

describe("a database locked by another process for longer than the app waits", () => {
  test("a write is answered 503 with Retry-After, not 500, once the wait is over", async () => {
    const dir = mkdtempSync(join(tmpdir(), "locked-app-"));
    const path = join(dir, "app.db");
    const store = openSqliteStore(path, { yieldWhenBusy: true });
    const logger = createMemoryLogger();
    const app = createApp({ store, logger });
    const holder = new Database(path);
    holder.run("BEGIN IMMEDIATE");
    try {
      const answer = await app.request("/api/items", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ sku: "L-1", name: "Widget", quantity: 1 }),
      });
      expect(answer.status).toBe(503);
      expect(answer.headers.get("retry-after")).toBe("30");
      expect(logger.lines.join("\n")).toContain(
        "the database is locked: another process held its write lock for over 5 s",
      );
    } finally {
      holder.run("ROLLBACK");
      holder.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});

// A real full disk: a 4 MiB tmpfs filled to its last block (mount needs root, which CI has).
describe.if(isRoot)("a full disk under a running app", () => {
  const dir = mkdtempSync(join(tmpdir(), "full-app-"));
  let mounted = false;
  beforeAll(() => {
    const mount = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", dir]);
    mounted = mount.exitCode === 0;
    if (!mounted) throw new Error(`mount tmpfs failed: ${mount.stderr.toString()}`);
  });
  afterAll(() => {
    if (mounted) Bun.spawnSync(["umount", "--lazy", dir]);
    rmSync(dir, { recursive: true, force: true });
  });

  test("writes are answered 503 with Retry-After, logged as one line, and /readyz says not ready", async () => {
    const store = openSqliteStore(join(dir, "app.db"));
    const logger = createMemoryLogger();
    const app = createApp({ store, logger });
    expect((await app.request("/readyz")).status).toBe(200);
    Bun.spawnSync(["dd", "if=/dev/zero", `of=${join(dir, "filler")}`, "bs=4k"]);

    const answers: Response[] = [];
    for (let i = 0; i < 3; i++) {
      answers.push(
        await app.request("/api/items", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ sku: `SKU-${i}`, name: "Widget", quantity: 1 }),
        }),
      );
    }
    for (const answer of answers) {
      expect(answer.status).toBe(503);
      expect(answer.headers.get("retry-after")).toBe("30");
      expect(((await answer.json()) as { error: string }).error).toStartWith(
        "Service unavailable: the database cannot take writes now",
      );
    }
    const errors = logger.lines.filter((line) => line.includes("cannot take this request"));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain(`the disk holding ${dir} is full`);
    expect(logger.lines.join("\n")).not.toContain("    at ");

    const ready = await app.request("/readyz");
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: "not ready", reason: "disk full" });
    await store.close();
  });

  test("an API token still reads on a full disk: its last use, a write, is not its request's", async () => {
    // A fresh disk of its own: the test before filled its disk.
    const own = join(dir, "own");
    mkdirSync(own);
    Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", own]);
    try {
      const store = openSqliteStore(join(own, "app.db"));
      const token = generateApiToken();
      await store.tokens.create({
        name: "monitor",
        hash: hashApiToken(token),
        write: false,
        expiresAt: null,
      });
      const app = createApp({ store, logger: createMemoryLogger() });
      Bun.spawnSync(["dd", "if=/dev/zero", `of=${join(own, "filler")}`, "bs=4k"]);
      const read = await app.request("/api/items", {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(read.status).toBe(200);
      await store.close();
    } finally {
      Bun.spawnSync(["umount", "--lazy", own]);
    }
  });
});

describe.if(isRoot)("a database this user may only read", () => {
  test("`bun run app` refuses it at start: one line naming it and the fix, exit 2", async () => {
    const dir = mkdtempSync(join(tmpdir(), "read-only-app-"));
    try {
      chmodSync(dir, 0o777);
      const path = join(dir, "app.db");
      await openSqliteStore(path).close();
      chmodSync(path, 0o644);
      // The WAL and its index stay beside a closed database; this user may write those, so
      // SQLite opens the database itself read-only rather than failing to open it.
      for (const file of [`${path}-wal`, `${path}-shm`]) {
        if (existsSync(file)) chmodSync(file, 0o666);
      }
      const child = Bun.spawn(
        [
          "runuser",
          "-u",
          "nobody",
          "--",
          "env",
          `PATH=${process.env.PATH}`,
          "bun",
          join(ROOT, "scripts", "app.ts"),
          "--port",
          "0",
        ],
        {
          cwd: "/",
          env: { ...process.env, DATABASE_URL: path, NO_COLOR: "1" },
          stdout: "pipe",
          stderr: "pipe",
        },
      );
      const { code, stdout, stderr } = await outputOf(child);
      expect(stdout).toBe("");
      const lines = stderr.trimEnd().split("\n");
      expect(lines.at(-1)).toBe(
        `error: DATABASE_URL=${JSON.stringify(path)}: cannot write the SQLite ${path} database: the database cannot be written by this user: give it write access to ${path} and its folder ${dir} (SQLite writes -wal and -shm files beside it), or run as the user who owns them`,
      );
      expect(code).toBe(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
