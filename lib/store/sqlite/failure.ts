import { statfsSync } from "node:fs";
import { dirname } from "node:path";

/** Below this much free space on the database's file system, an I/O error is a full disk. */
const NEARLY_FULL_BYTES = 1_048_576;

/**
 * What a SQLite or file-system error means for the person running a command, with the fix:
 * a read-only file or folder, a full disk, not a database, … or null for any other error. Used
 * both at open (`atOpen`: any SQLite error is then about the file) and for a write that fails
 * later (a disk filling up during a command).
 */
export function explainSqliteFailure(
  error: unknown,
  path: string,
  options: { atOpen?: boolean; freeBytes?: (folder: string) => number | null } = {},
): string | null {
  const freeBytes = options.freeBytes ?? freeSpace;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code !== "string") return null;
  const folder = dirname(path);
  if (code === "SQLITE_FULL" || code.startsWith("SQLITE_IOERR") || code === "ENOSPC") {
    const free = freeBytes(folder);
    if (
      code === "SQLITE_FULL" ||
      code === "ENOSPC" ||
      (free !== null && free < NEARLY_FULL_BYTES)
    ) {
      return `the disk holding ${folder} is full${free === null ? "" : ` (${Math.floor(free / 1024)} KiB free)`}: free some space there (df -h ${folder}), then run the command again`;
    }
    return `disk I/O error (${code}): check the disk holding ${folder} (dmesg), then run the command again`;
  }
  if (code === "EROFS") return `${folder} is on a read-only file system: use a writable folder`;
  if (code.startsWith("SQLITE_READONLY") || code === "SQLITE_PERM") {
    return `the database cannot be written by this user: give it write access to ${path} and its folder ${folder} (SQLite writes -wal and -shm files beside it), or run as the user who owns them`;
  }
  switch (code) {
    case "SQLITE_CANTOPEN":
      return `unable to open ${path}: check that it is a file, and that this user may read and write it and its folder ${folder} (SQLite writes -wal and -shm files beside it)`;
    case "SQLITE_NOTADB":
      return "the file is not a SQLite database";
    case "EACCES":
    case "EPERM":
      return `permission denied creating its folder ${folder}`;
    case "ENOENT":
      return `its folder ${folder} cannot be created`;
    case "ENOTDIR":
    case "EEXIST":
      return "a part of its folder path is a file";
    default:
      // At open any SQLite error is about the file; later, one such as a constraint is not.
      return options.atOpen && code.startsWith("SQLITE_") ? String(message ?? code) : null;
  }
}

/** Free bytes for this user on the file system holding `folder`; null when it cannot be read. */
export function freeSpace(folder: string): number | null {
  try {
    const stats = statfsSync(folder);
    return stats.bavail * stats.bsize;
  } catch {
    return null;
  }
}
