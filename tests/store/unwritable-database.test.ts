import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { explainSqliteFailure } from "../../lib/store/sqlite/failure.ts";
import { openSqliteStore } from "../../lib/store/sqlite/store.ts";
import { outputOf } from "../fakes/process-output.ts";

// Each case starts a bun process: several seconds on a loaded 2-core machine.
setDefaultTimeout(60_000);

const ROOT = join(import.meta.dir, "..", "..");
const isRoot = process.getuid?.() === 0;

function sqliteError(code: string, message = "some SQLite text"): Error {
  return Object.assign(new Error(message), { code });
}

describe("explainSqliteFailure()", () => {
  const plenty = () => 10 * 1_048_576;
  const none = () => 4096;

  test.each([
    [
      "on a nearly full file system is a full disk, with the folder to free",
      "SQLITE_IOERR_SHMSIZE",
      none,
      "the disk holding /srv/x is full (4 KiB free): free some space there (df -h /srv/x), then run the command again",
    ],
    [
      "with space left is named as one",
      "SQLITE_IOERR_WRITE",
      plenty,
      "disk I/O error (SQLITE_IOERR_WRITE): check the disk holding /srv/x (dmesg), then run the command again",
    ],
  ])("an I/O error %s", (_, code, freeBytes, message) => {
    expect(explainSqliteFailure(sqliteError(code), "/srv/x/app.db", { freeBytes })).toBe(message);
  });

  test("a read-only file or folder says who needs write access to what", () => {
    expect(explainSqliteFailure(sqliteError("SQLITE_READONLY_DIRECTORY"), "/srv/x/app.db")).toBe(
      "the database cannot be written by this user: give it write access to /srv/x/app.db and its folder /srv/x (SQLite writes -wal and -shm files beside it), or run as the user who owns them",
    );
  });

  test("after open, an error that is not about the file or the disk is left to its caller", () => {
    expect(explainSqliteFailure(sqliteError("SQLITE_CONSTRAINT_UNIQUE"), "/x/app.db")).toBeNull();
    expect(
      explainSqliteFailure(sqliteError("SQLITE_CORRUPT", "malformed"), "/x/app.db", {
        atOpen: true,
      }),
    ).toBe("malformed");
  });
});

/** Runs a command on `databaseUrl` as `user` (root's own when undefined). */
async function run(databaseUrl: string, command: string[], user?: string) {
  const [script, ...args] = command;
  const argv = ["bun", join(ROOT, "scripts", `${script}.ts`), ...args];
  const child = Bun.spawn(
    user === undefined
      ? argv
      : ["runuser", "-u", user, "--", "env", `PATH=${process.env.PATH}`, ...argv],
    {
      cwd: "/",
      env: { ...process.env, DATABASE_URL: databaseUrl, NO_COLOR: "1" },
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  return outputOf(child);
}

/** Commands that write: on a full disk each is refused with one line. */
const WRITING = [
  ["webhooks", "add", "--name", "b", "--url", "https://example.test/b"],
  ["webhooks", "emit", "item.created", "--data", '{"id": 1}'],
  ["webhooks", "update", "a", "--name", "renamed"],
  ["webhooks", "disable", "a"],
];
/**
 * Every command, the long-running ones included: a file this user cannot write stops each at
 * once. (A disk that fills while a worker runs is a logged, counted retry instead.)
 */
const EVERY = [
  ...WRITING,
  ["webhooks", "list"],
  ["webhooks", "retry", "--all-failed"],
  ["worker", "--once"],
  ["worker"],
  ["app", "--port", "0"],
];

function cases(commands: string[][]): Array<[string, string[]]> {
  return commands.map((command) => [command.join(" "), command]);
}

// Real faults: a 1 MiB tmpfs filled to the last block, and a file another user cannot write.
// Both need root (mount, runuser), which CI has.
describe.if(isRoot)(
  "a database that cannot be written: one line naming it and the fix, exit 2",
  () => {
    const dir = mkdtempSync(join(tmpdir(), "unwritable-"));
    const full = join(dir, "full");
    let mounted = false;
    beforeAll(async () => {
      Bun.spawnSync(["mkdir", "-p", full]);
      const mount = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", full]);
      mounted = mount.exitCode === 0;
      if (!mounted) throw new Error(`mount tmpfs failed: ${mount.stderr.toString()}`);
      const seeded = openSqliteStore(join(full, "app.db"));
      await seeded.webhooks.create({ name: "a", url: "https://example.test/a" });
      await seeded.close();
      // Fills what is left; dd stops at the end of the space with "No space left on device".
      Bun.spawnSync(["dd", "if=/dev/zero", `of=${join(full, "filler")}`, "bs=4k"]);
      const readOnly = join(dir, "ro");
      Bun.spawnSync(["mkdir", "-p", readOnly]);
      openSqliteStore(join(readOnly, "app.db")).close();
      chmodSync(dir, 0o755);
      chmodSync(readOnly, 0o755);
      chmodSync(join(readOnly, "app.db"), 0o644);
    });
    afterAll(() => {
      if (mounted) Bun.spawnSync(["umount", "--lazy", full]);
      rmSync(dir, { recursive: true, force: true });
    });

    test.each(cases(WRITING))("on a full disk: %s", async (_name, command) => {
      const path = join(full, "app.db");
      const { code, stderr, stdout } = await run(path, command);
      expect(stdout).toBe("");
      // Full before the open (no room for the -shm file) or at the first write: either way one
      // line naming the file, the disk and what to do.
      expect(stderr).toStartWith(`error: DATABASE_URL="${path}": cannot `);
      expect(stderr).toEndWith(
        `the SQLite database: the disk holding ${full} is full (0 KiB free): free some space there (df -h ${full}), then run the command again\n`,
      );
      expect(stderr.trimEnd().split("\n")).toHaveLength(1);
      expect(code).toBe(2);
    });

    test("a write that fills the disk during a command says the same", async () => {
      Bun.spawnSync(["rm", join(full, "filler")]);
      Bun.spawnSync(["dd", "if=/dev/zero", `of=${join(full, "filler")}`, "bs=1k", "count=960"]);
      const template = join(dir, "big.tpl");
      writeFileSync(template, `{{ data.name }}${"x".repeat(60_000)}`);
      const path = join(full, "app.db");
      const add = ["webhooks", "add", "--name", "big", "--url", "https://example.test/big"];
      const { code, stderr } = await run(path, [...add, "--body-template", `@${template}`]);
      expect(stderr).toBe(
        `error: DATABASE_URL="${path}": cannot write the SQLite database: the disk holding ${full} is full (0 KiB free): free some space there (df -h ${full}), then run the command again\n`,
      );
      expect(code).toBe(2);
    });

    test.each(cases(EVERY))("read-only for this user: %s", async (_name, command) => {
      const path = join(dir, "ro", "app.db");
      const { code, stderr, stdout } = await run(path, command, "nobody");
      expect(stdout).toBe("");
      // Other users can read the file, so a warning says so first; then the one error line.
      const error = stderr.trimEnd().split("\n").at(-1);
      expect(error).toStartWith(`error: DATABASE_URL="${path}": cannot open the SQLite database: `);
      expect(error).toMatch(/may read and write it and its folder|cannot be written by this user/);
      expect(code).toBe(2);
    });
  },
);
