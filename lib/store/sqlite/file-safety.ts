import { closeSync, mkdirSync, openSync, statSync } from "node:fs";
import { dirname } from "node:path";

/** Who to tell about a database file others can read. */
export type Warn = (message: string) => void;

/**
 * Creates the database's folder (0700) and file (0600) before SQLite opens it: the file holds
 * every webhook secret, and SQLite gives its -wal and -shm files the database file's mode, so
 * those follow. Existing files keep their mode (an operator may mean it), with a warning when
 * other users can read them.
 */
export function prepareDatabaseFile(path: string, warn: Warn): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  try {
    closeSync(openSync(path, "wx", 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    const mode = modeOf(file);
    if (mode !== null && (mode & 0o077) !== 0) {
      warn(
        `${file} is open to other users of this machine (mode ${octal(mode)}); it holds webhook secrets: chmod 600 ${file}`,
      );
    }
  }
}

/** Which file a path names: device and inode, or null when there is none. */
export interface FileIdentity {
  dev: number;
  ino: number;
}

export function fileIdentity(path: string): FileIdentity | null {
  try {
    const stat = statSync(path);
    return { dev: stat.dev, ino: stat.ino };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

/**
 * Why `path` no longer names the file opened as `opened` (deleted, or replaced by another file),
 * or null while it still does. A connection keeps writing to an unlinked file without error, so
 * nobody would see those writes.
 */
export function fileChange(path: string, opened: FileIdentity): string | null {
  const now = fileIdentity(path);
  if (now === null) return `the database file ${path} was deleted`;
  if (now.dev !== opened.dev || now.ino !== opened.ino) {
    return `the database file ${path} was replaced by another file`;
  }
  return null;
}

function modeOf(path: string): number | null {
  try {
    return statSync(path).mode & 0o777;
  } catch {
    return null;
  }
}

function octal(mode: number): string {
  return `0${mode.toString(8).padStart(3, "0")}`;
}
