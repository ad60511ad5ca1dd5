import { lstatSync, realpathSync, type Stats, statSync } from "node:fs";
import { basename, dirname, join, resolve, sep } from "node:path";

/**
 * What writing to a path the user gave may touch: a standard stream (/dev/stdout, /dev/stderr
 * and their /dev/fd and /proc/self/fd names), or a regular file, replaced or created. `path` is
 * where the file is written: a symlink's target when the given path is a symlink, so the link
 * stays a link.
 */
export type WriteTarget =
  | { kind: "stdout" }
  | { kind: "stderr" }
  | { kind: "file"; path: string; exists: boolean; throughLink: boolean };

/** Why a path is not written, as the rest of a sentence that starts with the path ("is a FIFO"). */
export class UnsafeTarget extends Error {
  override name = "UnsafeTarget";
}

const STREAMS = new Map<string, "stdout" | "stderr">([
  ["/dev/stdout", "stdout"],
  ["/dev/fd/1", "stdout"],
  ["/proc/self/fd/1", "stdout"],
  ["/dev/stderr", "stderr"],
  ["/dev/fd/2", "stderr"],
  ["/proc/self/fd/2", "stderr"],
]);

/** The kernel's and the devices' folders: a file written there changes the machine. */
export const SYSTEM_FOLDERS = ["/dev", "/proc", "/sys"] as const;

/** The standard stream a path names (`/dev/stdout`, `/dev/fd/2`…), or undefined. */
export function standardStream(path: string): "stdout" | "stderr" | undefined {
  return STREAMS.get(resolve(path));
}

/** The system folder (/dev, /proc, /sys) an absolute path lies in, or undefined. */
export function systemFolderOf(path: string): string | undefined {
  return SYSTEM_FOLDERS.find((folder) => path === folder || path.startsWith(`${folder}${sep}`));
}

/**
 * Where writing `path` may go without harming what is there, or UnsafeTarget saying why not:
 * nothing in /dev, /proc or /sys but the standard streams; no device, FIFO, socket or folder; a
 * symlink followed to an existing regular file, refused otherwise (dangling, or to a device),
 * and refused when someone other than the writing user (or root) owns it, as the
 * kernel's protected_symlinks does in shared folders.
 */
export function writeTarget(path: string, options: { uid?: number } = {}): WriteTarget {
  const stream = standardStream(path);
  if (stream !== undefined) return { kind: stream };
  const absolute = resolve(path);
  refuseSystemFolder(absolute, "is");
  let info: Stats;
  try {
    info = lstatSync(absolute);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    const real = inRealFolder(absolute);
    refuseSystemFolder(real, "would be");
    return { kind: "file", path: real, exists: false, throughLink: false };
  }
  if (!info.isSymbolicLink()) {
    const real = inRealFolder(absolute);
    refuseSystemFolder(real, "is");
    if (!info.isFile()) throw new UnsafeTarget(`is ${kindOf(info)}, not a regular file`);
    return { kind: "file", path: real, exists: true, throughLink: false };
  }
  const uid = options.uid ?? process.geteuid?.() ?? 0;
  if (info.uid !== uid && info.uid !== 0) {
    throw new UnsafeTarget(
      `is a symlink owned by another user (uid ${info.uid}): it is followed only when it is the writer's or root's`,
    );
  }
  let real: string;
  try {
    real = realpathSync(absolute);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new UnsafeTarget("is a symlink to nothing (a dangling link)");
    if (code === "ELOOP") throw new UnsafeTarget("is a symlink that loops");
    throw error;
  }
  refuseSystemFolder(real, `is a symlink to ${real}, which is`);
  const target = statSync(real);
  if (!target.isFile()) {
    throw new UnsafeTarget(`is a symlink to ${real}, ${kindOf(target)}, not a regular file`);
  }
  return { kind: "file", path: real, exists: true, throughLink: true };
}

function refuseSystemFolder(path: string, verb: string): void {
  const folder = systemFolderOf(path);
  if (folder === undefined) return;
  throw new UnsafeTarget(
    `${verb} in ${folder}, where only /dev/stdout and /dev/stderr are written (as standard output and error)`,
  );
}

/** The path with its folder's symlinks resolved; as given when the folder cannot be resolved. */
function inRealFolder(path: string): string {
  try {
    return join(realpathSync(dirname(path)), basename(path));
  } catch {
    return path;
  }
}

export function kindOf(info: Stats): string {
  if (info.isFile()) return "a regular file";
  if (info.isDirectory()) return "a directory";
  if (info.isCharacterDevice()) return "a character device";
  if (info.isBlockDevice()) return "a block device";
  if (info.isFIFO()) return "a FIFO";
  if (info.isSocket()) return "a socket";
  if (info.isSymbolicLink()) return "a symlink";
  return "not a file";
}

/**
 * A folder to write files in (made when missing), with its symlinks resolved as far as it
 * exists, or UnsafeTarget when it is or would be in /dev, /proc or /sys. Checked before the
 * folder is made, so nothing is created there either.
 */
export function writeFolder(path: string): string {
  let existing = resolve(path);
  const missing: string[] = [];
  for (;;) {
    try {
      existing = realpathSync(existing);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT" || existing === dirname(existing)) {
        throw error;
      }
      missing.unshift(basename(existing));
      existing = dirname(existing);
    }
  }
  const real = join(existing, ...missing);
  const folder = systemFolderOf(resolve(path)) ?? systemFolderOf(real);
  if (folder !== undefined) {
    throw new UnsafeTarget(`is in ${folder}, where no folder of files is written`);
  }
  return real;
}
