import { randomBytes } from "node:crypto";
import { type FileHandle, lstat, open, readdir, rename, stat, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { UsageError } from "../../config/errors.ts";
import { UnsafeTarget, type WriteTarget, writeTarget } from "../../files/write-target.ts";
import { errorMessage } from "../../text/error-message.ts";

/** Where text goes: process.stdout in the script, an array in tests. */
export interface TextSink {
  write(text: string): unknown;
}

export interface Output {
  /** The standard stream written, or undefined for a file. */
  stream?: "stdout" | "stderr";
  write(text: string): Promise<void>;
  /** Everything was written: make it visible (a file is renamed into place). */
  commit(): Promise<void>;
  /** The run failed: leave no half-written file behind. */
  abort(): Promise<void>;
}

/** A sink over a Node stream that waits until each chunk is handed to the OS. */
export function streamSink(stream: NodeJS.WritableStream): TextSink {
  return {
    write: (text: string) =>
      new Promise<void>((resolve, reject) => {
        stream.write(text, (error) => (error ? reject(error) : resolve()));
      }),
  };
}

/**
 * Opens the digest's destination. With `--out FILE` the text goes to a temporary file created
 * beside FILE (so the final rename stays on one file system) that replaces FILE only when the
 * digest is complete, and is removed if it is not (an error, Ctrl-C). The temporary file is
 * created exclusively under an unpredictable name: a file or symlink already there (planted
 * to redirect the write) makes the open fail instead of being followed. `--out /dev/stdout` and
 * `/dev/stderr` are the streams themselves, and a symlink is followed to the regular file it
 * names, which is replaced while the link stays (outputTarget). Opening happens before any
 * network call so a bad path fails at once (UsageError).
 */
export async function openOutput(
  path: string | undefined,
  stdout: TextSink,
  options: { stderr?: TextSink; temporaryPath?: (path: string) => string } = {},
): Promise<Output> {
  const target = path === undefined ? ({ kind: "stdout" } as const) : outputTarget(path);
  if (target.kind === "stdout") return streamOutput(stdout, "stdout");
  if (target.kind === "stderr") {
    if (options.stderr === undefined) throw new Error("openOutput(): no stderr sink was given");
    return streamOutput(options.stderr, "stderr");
  }
  const file = target.path;
  await removeStaleTemporaries(dirname(file), { of: basename(file) });
  const mode = await modeOf(file);
  let temporary = "";
  let handle: FileHandle | undefined;
  for (let attempt = 0; handle === undefined; attempt++) {
    temporary = (options.temporaryPath ?? temporaryPath)(file);
    try {
      // "wx": O_CREAT | O_EXCL, which never follows a symlink at the path.
      handle = await open(temporary, "wx", mode ?? 0o644);
      // The file it replaces keeps its permissions: a private (0600) digest stays private.
      if (mode !== null) await handle.chmod(mode);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST" && attempt < 5) continue;
      throw new UsageError(`--out ${path} cannot be written: ${errorMessage(error)}`);
    }
  }
  const opened = handle;
  return {
    write: async (text) => {
      if (text !== "") await opened.write(text);
    },
    commit: async () => {
      await opened.close();
      await rename(temporary, file);
    },
    abort: async () => {
      await opened.close().catch(() => {});
      await unlink(temporary).catch(() => {});
    },
  };
}

function streamOutput(sink: TextSink, stream: "stdout" | "stderr"): Output {
  return {
    stream,
    write: async (text) => {
      if (text !== "") await sink.write(text);
    },
    commit: async () => {},
    abort: async () => {},
  };
}

/**
 * Where `--out PATH` writes (writeTarget), or a UsageError before anything is written that
 * leaves the path exactly as it was: a device such as /dev/null, a FIFO, a directory, a
 * socket, anything else in /dev, /proc or /sys, a dangling symlink or one to anything but a
 * regular file. Renaming over /dev/stdout would turn it into a file for every program on the
 * machine.
 */
export function outputTarget(path: string): WriteTarget {
  try {
    return writeTarget(path);
  } catch (error) {
    if (error instanceof UnsafeTarget) {
      throw new UsageError(
        `--out ${path} ${error.message}: expected a file path (or - for stdout)`,
      );
    }
    throw new UsageError(`--out ${path} cannot be written: ${errorMessage(error)}`);
  }
}

/** outputTarget's check alone, for a caller that opens the output later. */
export async function refuseNonRegularTarget(path: string): Promise<void> {
  outputTarget(path);
}

/**
 * Writes a whole file atomically: into a temporary file beside it, created exclusively (never
 * through a planted file or symlink), flushed to disk, then renamed over `path`. A reader sees
 * the old file or the new one, never half of one; on an error the temporary file is removed.
 * A symlink at `path` is followed to the regular file it names, which is replaced while the
 * link stays; anything else there but a regular file (writeTarget) is refused, left as it was.
 */
export async function writeFileAtomic(
  path: string,
  text: string,
  options: { temporaryPath?: (path: string) => string } = {},
): Promise<void> {
  const target = fileTarget(path);
  const temporary = (options.temporaryPath ?? temporaryPath)(target.path);
  const mode = await modeOf(target.path);
  const file = await open(temporary, "wx", mode ?? 0o644);
  try {
    // The file it replaces keeps its permissions, as openOutput's does.
    if (mode !== null) await file.chmod(mode);
    await file.writeFile(text);
    await file.sync();
    await file.close();
    await rename(temporary, target.path);
  } catch (error) {
    await file.close().catch(() => {});
    await unlink(temporary).catch(() => {});
    throw error;
  }
}

/** The permission bits of the regular file at `path`, or null when there is none yet. */
async function modeOf(path: string): Promise<number | null> {
  try {
    const stats = await stat(path);
    return stats.isFile() ? stats.mode & 0o777 : null;
  } catch {
    return null;
  }
}

function fileTarget(path: string): { path: string } {
  try {
    const target = writeTarget(path);
    if (target.kind === "file") return target;
    throw new UnsafeTarget("is a standard stream, not a file");
  } catch (error) {
    if (error instanceof UnsafeTarget) throw new Error(`${path} ${error.message}`);
    throw error;
  }
}

/** `.digest.md.3f9c2a71b0e4.tmp` beside `digest.md`: hidden, and not guessable in advance. */
export function temporaryPath(path: string): string {
  return join(dirname(path), `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`);
}

/** A temporary file older than this belongs to no running digest: a run killed mid-write left it. */
export const STALE_TEMPORARY_MS = 60 * 60_000;

const TEMPORARY_NAME = /^\.(.+)\.[0-9a-f]{12}\.tmp$/;

/**
 * Removes from `dir` the hidden temporary files (temporaryPath) that runs killed mid-write left
 * more than STALE_TEMPORARY_MS ago; with `of`, only those of that file name. A newer one may be
 * another run's, still writing. Best effort: what cannot be read or removed stays.
 */
export async function removeStaleTemporaries(
  dir: string,
  options: { of?: string; now?: number } = {},
): Promise<void> {
  const now = options.now ?? Date.now();
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    const target = TEMPORARY_NAME.exec(name)?.[1];
    if (target === undefined || (options.of !== undefined && target !== options.of)) continue;
    const path = join(dir, name);
    const info = await lstat(path).catch(() => null);
    if (info?.isFile() && now - info.mtimeMs > STALE_TEMPORARY_MS) {
      await unlink(path).catch(() => {});
    }
  }
}
