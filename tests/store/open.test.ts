import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { ConfigError } from "../../lib/config/errors.ts";
import { parseDatabaseUrl } from "../../lib/store/database-url.ts";
import { openStore } from "../../lib/store/open.ts";
import { openSqlite } from "../../lib/store/sqlite/connection.ts";

async function failure(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(
    () => new Error("opened"),
    (e: Error) => e,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return error;
}

describe("openStore() at start-up", () => {
  test("a folder or a file that is not a database is one line naming the variable and the path", async () => {
    const dir = mkdtempSync(join(tmpdir(), "open-store-"));
    try {
      const notADatabase = join(dir, "notes.txt");
      writeFileSync(notADatabase, "x".repeat(4096));
      expect((await failure(openStore({ kind: "sqlite", path: dir }))).message).toBe(
        `DATABASE_URL=${JSON.stringify(dir)}: cannot open the SQLite database: unable to open ${dir}: check that it is a file, and that this user may read and write it and its folder ${dirname(dir)} (SQLite writes -wal and -shm files beside it)`,
      );
      const flagged = await failure(
        openStore({ kind: "sqlite", path: notADatabase }, { source: "--database-url" }),
      );
      expect(flagged.message).toBe(
        `--database-url=${JSON.stringify(notADatabase)}: cannot open the SQLite database: the file is not a SQLite database`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("an unreachable PostgreSQL server names host, port, database and user, never the password", async () => {
    const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
    const port = server.port;
    await server.stop(true);
    const url = `postgres://hooks:s3cret-pass@127.0.0.1:${port}/inventory`;
    // An aborted signal: no waiting for the server to come up (commands wait up to 5 s).
    const error = await failure(
      openStore({ kind: "postgres", url }, { signal: AbortSignal.abort() }),
    );
    expect(error.message).toBe(
      `DATABASE_URL: cannot use PostgreSQL at 127.0.0.1:${port}/inventory as hooks: connection refused or host not reachable`,
    );
    expect(error.message).not.toContain("s3cret");
  });
});

test("parseDatabaseUrl() names an unsupported URL without its password", () => {
  expect(() => parseDatabaseUrl("mysql://app:hunter2@db.internal/inventory")).toThrow(
    new ConfigError(
      'DATABASE_URL="mysql://app:***@db.internal/inventory" is invalid: expected a file path, sqlite:PATH or postgres://user@host/db',
    ),
  );
});

describe("sqlite:PATH?synchronous=full", () => {
  test("parseDatabaseUrl() reads the one setting a sqlite: URL takes, and refuses any other", () => {
    expect(parseDatabaseUrl("sqlite:data/app.db?synchronous=full")).toEqual({
      kind: "sqlite",
      path: "data/app.db",
      synchronous: "FULL",
    });
    expect(parseDatabaseUrl("sqlite:///srv/app.db?synchronous=NORMAL")).toEqual({
      kind: "sqlite",
      path: "/srv/app.db",
      synchronous: "NORMAL",
    });
    expect(parseDatabaseUrl("sqlite:data/app.db")).toEqual({ kind: "sqlite", path: "data/app.db" });
    expect(() => parseDatabaseUrl("sqlite:data/app.db?synchronous=off")).toThrow(
      new ConfigError(
        'DATABASE_URL="sqlite:data/app.db?synchronous=off" is invalid: a sqlite: URL takes only ?synchronous=normal or ?synchronous=full',
      ),
    );
  });

  test("openSqlite() with synchronous FULL syncs every commit; NORMAL otherwise", () => {
    const dir = mkdtempSync(join(tmpdir(), "open-sync-"));
    try {
      const levelOf = (synchronous?: "FULL" | "NORMAL") => {
        const db = openSqlite(join(dir, `${synchronous ?? "default"}.db`), { synchronous });
        const level = db.query("PRAGMA synchronous").get();
        db.close();
        return level;
      };
      expect(levelOf("FULL")).toEqual({ synchronous: 2 });
      expect(levelOf()).toEqual({ synchronous: 1 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
