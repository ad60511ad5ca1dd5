import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";

/**
 * The most an @FILE flag value may hold: a template or condition set is at most MAX_OPTION_TEXT
 * (65,536) characters, four bytes each at worst; validate.ts then counts the characters.
 */
export const MAX_OPTION_FILE_BYTES = 4 * 65_536;

/**
 * The text of the file an `@FILE` flag names: a regular file of at most MAX_OPTION_FILE_BYTES.
 * Opened without blocking and checked before any read, so `@/dev/zero` does not fill the memory
 * and a FIFO does not hang the command waiting for a writer. Throws an Error whose message is a
 * short phrase (an errno code, or what the file is instead).
 */
export function readOptionFile(path: string, maxBytes: number = MAX_OPTION_FILE_BYTES): string {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new Error(stat.isDirectory() ? "a directory" : "not a regular file");
    if (stat.size > maxBytes) throw new Error(`larger than ${maxBytes} bytes (${stat.size})`);
    // One byte more than allowed: a file that grew since fstat is noticed.
    const buffer = Buffer.alloc(maxBytes + 1);
    let size = 0;
    for (;;) {
      const read = readSync(fd, buffer, size, buffer.length - size, null);
      if (read === 0) break;
      size += read;
      if (size > maxBytes) throw new Error(`larger than ${maxBytes} bytes`);
    }
    return buffer.toString("utf8", 0, size);
  } finally {
    closeSync(fd);
  }
}
