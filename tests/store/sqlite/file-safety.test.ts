import { describe, expect, test } from "bun:test";
import {
  chmodSync,
  closeSync,
  openSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { createMemoryLogger } from "../../../lib/log.ts";
import { openStore } from "../../../lib/store/open.ts";
import { fileChange, fileIdentity } from "../../../lib/store/sqlite/file-safety.ts";
import { openSqliteStore } from "../../../lib/store/sqlite/store.ts";
import { tempDirs } from "../../fakes/temp-dirs.ts";

const tempDir = tempDirs("db-modes-");

const mode = (path: string) => statSync(path).mode & 0o777;

describe("database file modes", () => {
  test("a new database gets a 0700 folder and 0600 file, -wal and -shm", async () => {
    const dir = tempDir();
    const path = join(dir, "nested", "data", "app.db");
    const warnings: string[] = [];
    const store = openSqliteStore(path, { warn: (line) => warnings.push(line) });
    await store.webhooks.create({ name: "hook", url: "https://example.com/", secret: null });
    expect(mode(join(dir, "nested"))).toBe(0o700);
    expect(mode(join(dir, "nested", "data"))).toBe(0o700);
    expect(mode(path)).toBe(0o600);
    expect(mode(`${path}-wal`)).toBe(0o600);
    expect(mode(`${path}-shm`)).toBe(0o600);
    expect(warnings).toEqual([]);
    await store.close();
  });

  test("an existing database others can read is opened as is, with a warning through the logger", async () => {
    const dir = tempDir();
    const path = join(dir, "app.db");
    await (await openStore({ kind: "sqlite", path })).close();
    chmodSync(path, 0o644);
    const logger = createMemoryLogger();
    const store = await openStore({ kind: "sqlite", path }, { logger });
    expect(logger.lines).toEqual([
      `warn ${path} is open to other users of this machine (mode 0644); it holds webhook secrets: chmod 600 ${path}`,
    ]);
    expect(mode(path)).toBe(0o644);
    await store.close();
  });

  test("an owner-only existing file, or an empty one made by hand, opens without a warning", async () => {
    const path = join(tempDir(), "app.db");
    writeFileSync(path, "", { mode: 0o600 });
    const warnings: string[] = [];
    const store = openSqliteStore(path, { warn: (line) => warnings.push(line) });
    expect(warnings).toEqual([]);
    await store.close();
  });
});

describe("fileChange()", () => {
  test("says whether the path still names the file first seen there", () => {
    const dir = tempDir();
    const path = join(dir, "app.db");
    writeFileSync(path, "x");
    // Held open as the database connection holds it, so its inode is not reused.
    const fd = openSync(path, "r");
    const opened = fileIdentity(path);
    if (opened === null) throw new Error("the file exists");
    expect(fileChange(path, opened)).toBeNull();
    rmSync(path);
    expect(fileChange(path, opened)).toBe(`the database file ${path} was deleted`);
    writeFileSync(join(dir, "other"), "y");
    renameSync(join(dir, "other"), path);
    expect(fileChange(path, opened)).toBe(`the database file ${path} was replaced by another file`);
    closeSync(fd);
  });
});
