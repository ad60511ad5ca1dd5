import { describe, expect, test } from "bun:test";
import {
  lstatSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { runCommand } from "citty";
import { createBackupCommand } from "../../lib/app/backup-command.ts";
import { ConfigError } from "../../lib/config/errors.ts";
import { openSqliteStore } from "../../lib/store/sqlite/store.ts";
import { tempDirs } from "../fakes/temp-dirs.ts";

const tempDir = tempDirs("backup-target-");
const isRoot = process.getuid?.() === 0;

/** `app backup FILE` in-process on a fresh database; the error it throws, if any. */
async function backup(file: string, dir: string): Promise<{ error?: Error; report: string }> {
  const database = join(dir, "app.db");
  openSqliteStore(database).close();
  const lines: string[] = [];
  try {
    await runCommand(
      createBackupCommand({
        env: { DATABASE_URL: `sqlite://${database}` },
        write: (text) => lines.push(text),
      }),
      { rawArgs: [file] },
    );
    return { report: lines.join("") };
  } catch (error) {
    return { error: error as Error, report: lines.join("") };
  }
}

describe("app backup FILE never harms what is at FILE", () => {
  test("a new file in an ordinary folder is written", async () => {
    const dir = tempDir();
    const { error, report } = await backup(join(dir, "copy.db"), dir);
    expect(error).toBeUndefined();
    expect(report).toContain("mode 600, integrity checked");
    expect((lstatSync(join(dir, "copy.db")).mode & 0o777).toString(8)).toBe("600");
  });

  test("a symlink to a regular file is refused: the file and the link stay as they were", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "mine.txt"), "mine");
    symlinkSync(join(dir, "mine.txt"), join(dir, "copy.db"));
    const { error } = await backup(join(dir, "copy.db"), dir);
    expect(error).toBeInstanceOf(ConfigError);
    expect(error?.message).toBe(
      `Cannot back up: ${join(dir, "copy.db")} exists: give a new file name (a backup never replaces one)`,
    );
    expect(readFileSync(join(dir, "mine.txt"), "utf8")).toBe("mine");
    expect(readlinkSync(join(dir, "copy.db"))).toBe(join(dir, "mine.txt"));
  });

  test("a dangling symlink is refused, and nothing is made where it points", async () => {
    const dir = tempDir();
    symlinkSync(join(dir, "elsewhere.db"), join(dir, "copy.db"));
    const { error } = await backup(join(dir, "copy.db"), dir);
    expect(error?.message).toBe(
      `Cannot back up: ${join(dir, "copy.db")} is a symlink to nothing (a dangling link)`,
    );
    expect(readdirSync(dir)).not.toContain("elsewhere.db");
    // Nor is the private folder the copy is made in left behind.
    expect(readdirSync(dir).filter((name) => name.startsWith("."))).toEqual([]);
  });

  test.skipIf(!isRoot)(
    "a symlink to a device is refused and the device left as it was (root)",
    async () => {
      const dir = tempDir();
      Bun.spawnSync(["mknod", join(dir, "null"), "c", "1", "3"]);
      symlinkSync(join(dir, "null"), join(dir, "copy.db"));
      const { error } = await backup(join(dir, "copy.db"), dir);
      expect(error?.message).toBe(
        `Cannot back up: ${join(dir, "copy.db")} is a symlink to ${join(dir, "null")}, a character device, not a regular file`,
      );
      expect(lstatSync(join(dir, "null")).isCharacterDevice()).toBe(true);
    },
  );

  test("standard output and paths in /dev or /proc are refused before anything is copied", async () => {
    const dir = tempDir();
    const cases: Array<[string, string]> = [
      ["/dev/stdout", "is a standard stream: a backup is written to a new file of its own"],
      ["/dev/stderr", "is a standard stream: a backup is written to a new file of its own"],
      ["/dev/shm/copy.db", "is in /dev, where only /dev/stdout and /dev/stderr are written"],
      ["/proc/copy.db", "is in /proc, where only /dev/stdout and /dev/stderr are written"],
    ];
    for (const [file, why] of cases) {
      const { error } = await backup(file, dir);
      expect(error?.message).toStartWith(`Cannot back up: ${file} ${why}`);
    }
  });
});
