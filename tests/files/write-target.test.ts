import { describe, expect, test } from "bun:test";
import { lchownSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  standardStream,
  UnsafeTarget,
  writeFolder,
  writeTarget,
} from "../../lib/files/write-target.ts";
import { tempDirs } from "../fakes/temp-dirs.ts";

const tempDir = tempDirs("write-target-");
const isRoot = process.getuid?.() === 0;

/** writeTarget's refusal, as the sentence after the path. These calls only look, never write. */
function refusal(path: string, options?: { uid?: number }): string {
  try {
    writeTarget(path, options);
  } catch (error) {
    if (error instanceof UnsafeTarget) return error.message;
    throw error;
  }
  throw new Error(`${path} was not refused`);
}

/** What writeTarget() gives for a regular file at `path`, reached through a symlink or not. */
function file(path: string, exists: boolean, throughLink = false) {
  return { kind: "file" as const, path, exists, throughLink };
}

describe("writeTarget()", () => {
  test("names the standard streams by any of their paths", () => {
    for (const path of ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1", "/dev//stdout"]) {
      expect(writeTarget(path)).toEqual({ kind: "stdout" });
    }
    for (const path of ["/dev/stderr", "/dev/fd/2", "/proc/self/fd/2", "/dev/./stderr"]) {
      expect(writeTarget(path)).toEqual({ kind: "stderr" });
    }
    expect(standardStream("/dev/fd/3")).toBeUndefined();
  });

  test("refuses everything else in /dev, /proc and /sys, existing or not", () => {
    const why = (folder: string) =>
      `is in ${folder}, where only /dev/stdout and /dev/stderr are written (as standard output and error)`;
    expect(refusal("/dev/null")).toBe(why("/dev"));
    expect(refusal("/dev/shm/digest.md")).toBe(why("/dev"));
    expect(refusal("/dev/fd/3")).toBe(why("/dev"));
    expect(refusal("/proc/self/environ")).toBe(why("/proc"));
    expect(refusal("/proc/1/fd/1")).toBe(why("/proc"));
    expect(refusal("/sys/kernel/new-file")).toBe(why("/sys"));
  });

  test("a regular file, or a new one, is written where it is", () => {
    const dir = tempDir();
    writeFileSync(join(dir, "old.md"), "old");
    expect(writeTarget(join(dir, "old.md"))).toEqual(file(join(dir, "old.md"), true));
    expect(writeTarget(join(dir, "new.md"))).toEqual(file(join(dir, "new.md"), false));
  });

  test("a symlink to a regular file is followed: the file is the target", () => {
    const dir = tempDir();
    writeFileSync(join(dir, "real.md"), "old");
    symlinkSync(join(dir, "real.md"), join(dir, "link.md"));
    expect(writeTarget(join(dir, "link.md"))).toEqual(file(join(dir, "real.md"), true, true));
  });

  test("a file in a folder reached through a symlink to /dev is refused", () => {
    const dir = tempDir();
    symlinkSync("/dev", join(dir, "devices"));
    expect(refusal(join(dir, "devices", "null"))).toStartWith("is in /dev,");
    expect(refusal(join(dir, "devices", "new-file"))).toStartWith("would be in /dev,");
  });

  test("refuses a dangling symlink, a loop, and a symlink to a device, folder or FIFO", () => {
    const dir = tempDir();
    symlinkSync(join(dir, "missing"), join(dir, "dangling"));
    symlinkSync(join(dir, "loop-b"), join(dir, "loop-a"));
    symlinkSync(join(dir, "loop-a"), join(dir, "loop-b"));
    symlinkSync("/dev/null", join(dir, "to-null"));
    mkdirSync(join(dir, "folder"));
    symlinkSync(join(dir, "folder"), join(dir, "to-folder"));
    Bun.spawnSync(["mkfifo", join(dir, "pipe")]);
    symlinkSync(join(dir, "pipe"), join(dir, "to-pipe"));
    expect(refusal(join(dir, "dangling"))).toBe("is a symlink to nothing (a dangling link)");
    expect(refusal(join(dir, "loop-a"))).toBe("is a symlink that loops");
    expect(refusal(join(dir, "to-null"))).toBe(
      "is a symlink to /dev/null, which is in /dev, where only /dev/stdout and /dev/stderr are written (as standard output and error)",
    );
    expect(refusal(join(dir, "to-folder"))).toBe(
      `is a symlink to ${join(dir, "folder")}, a directory, not a regular file`,
    );
    expect(refusal(join(dir, "to-pipe"))).toBe(
      `is a symlink to ${join(dir, "pipe")}, a FIFO, not a regular file`,
    );
    expect(refusal(join(dir, "pipe"))).toBe("is a FIFO, not a regular file");
  });

  test.skipIf(!isRoot)("a symlink to a device made outside /dev is refused (root)", () => {
    const dir = tempDir();
    Bun.spawnSync(["mknod", join(dir, "null"), "c", "1", "3"]);
    symlinkSync(join(dir, "null"), join(dir, "to-device"));
    expect(refusal(join(dir, "to-device"))).toBe(
      `is a symlink to ${join(dir, "null")}, a character device, not a regular file`,
    );
  });

  test("a symlink someone else owns is not followed, as protected_symlinks would not", () => {
    const dir = tempDir();
    writeFileSync(join(dir, "real.md"), "old");
    const link = join(dir, "link.md");
    symlinkSync(join(dir, "real.md"), link);
    // Root gives the link to another user; anyone else asks as a user one above its own.
    if (isRoot) lchownSync(link, 4242, 4242);
    const owner = isRoot ? 4242 : (process.getuid?.() ?? 0);
    const writer = isRoot ? 0 : owner + 1;
    expect(refusal(link, { uid: writer })).toBe(
      `is a symlink owned by another user (uid ${owner}): it is followed only when it is the writer's or root's`,
    );
    expect(writeTarget(link, { uid: owner })).toMatchObject({ kind: "file", throughLink: true });
  });
});

describe("writeFolder()", () => {
  test("resolves the folder as far as it exists, and refuses one in /dev or /proc", () => {
    const dir = tempDir();
    symlinkSync(dir, join(dir, "here"));
    expect(writeFolder(join(dir, "here", "archive", "2026"))).toBe(join(dir, "archive", "2026"));
    symlinkSync("/dev", join(dir, "devices"));
    for (const path of ["/dev/shm/archive", "/proc/archive", join(dir, "devices", "archive")]) {
      expect(() => writeFolder(path)).toThrow(UnsafeTarget);
    }
    // Looking made nothing.
    expect(readdirSync(dir).sort()).toEqual(["devices", "here"]);
  });
});
