import { type FileHandle, open, rename, unlink } from "node:fs/promises";
import { UsageError } from "../config/errors.ts";

/** Where text goes: process.stdout in the script, an array in tests. */
export interface TextSink {
  write(text: string): unknown;
}

export interface Output {
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
 * Opens the digest's destination. With `--out FILE` the text goes to a temporary file next
 * to FILE that replaces it only when the digest is complete; opening happens before any
 * network call so a bad path fails at once (UsageError).
 */
export async function openOutput(path: string | undefined, stdout: TextSink): Promise<Output> {
  if (path === undefined) {
    return {
      write: async (text) => {
        if (text !== "") await stdout.write(text);
      },
      commit: async () => {},
      abort: async () => {},
    };
  }
  const temporary = `${path}.${process.pid}.tmp`;
  let handle: FileHandle;
  try {
    handle = await open(temporary, "w");
  } catch (error) {
    throw new UsageError(
      `--out ${path} cannot be written: ${error instanceof Error ? error.message : error}`,
    );
  }
  return {
    write: async (text) => {
      if (text !== "") await handle.write(text);
    },
    commit: async () => {
      await handle.close();
      await rename(temporary, path);
    },
    abort: async () => {
      await handle.close().catch(() => {});
      await unlink(temporary).catch(() => {});
    },
  };
}
