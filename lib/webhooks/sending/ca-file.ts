import { X509Certificate } from "node:crypto";
import { constants } from "node:fs";
import { open } from "node:fs/promises";
import { raceAbort } from "../../async/race-abort.ts";
import { errorMessage } from "../../text/error-message.ts";
import type { Checked } from "../definition/validate.ts";

/** A CA bundle is some kilobytes; a path such as /dev/zero must not fill the memory. */
export const MAX_CA_FILE_BYTES = 1024 * 1024;
/** How long opening and reading a CA file may take: a local file takes well under a millisecond. */
export const CA_FILE_DEADLINE_MS = 1000;

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/**
 * The text of a CA file: a regular file of at most 1 MiB holding PEM certificates that parse.
 * Opened without blocking and checked before any read, so a FIFO (whose open or read waits for a
 * writer forever, holding one of the runtime's few file threads) or a device is refused at once;
 * the whole read has a deadline besides. Throws an Error whose message is one line.
 */
export async function readCaFile(
  path: string,
  deadlineMs: number = CA_FILE_DEADLINE_MS,
): Promise<string> {
  return pemCertificates(await readPemFile(path, deadlineMs));
}

/**
 * The text of a regular file of at most 1 MiB, read as readCaFile reads one (no FIFO or device,
 * a deadline): the client certificate and key files are read the same way (client-cert.ts).
 */
export async function readPemFile(
  path: string,
  deadlineMs: number = CA_FILE_DEADLINE_MS,
): Promise<string> {
  const signal = AbortSignal.timeout(deadlineMs);
  const reading = readRegularFile(path, signal);
  try {
    return await raceAbort(reading, signal);
  } catch (error) {
    if (signal.aborted) throw new Error(`not read within ${deadlineMs} ms`);
    throw error;
  }
}

async function readRegularFile(path: string, signal: AbortSignal): Promise<string> {
  const flags = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;
  const handle = await open(path, flags).catch((error: unknown) => {
    throw new Error(fileErrorText(error));
  });
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new Error(`not a regular file (${kindOf(stat)})`);
    if (stat.size > MAX_CA_FILE_BYTES) {
      throw new Error(`larger than ${MAX_CA_FILE_BYTES} bytes (${stat.size})`);
    }
    // One byte more than allowed: a file that grew since fstat is noticed.
    const buffer = Buffer.alloc(MAX_CA_FILE_BYTES + 1);
    let size = 0;
    while (size < buffer.length && !signal.aborted) {
      const { bytesRead } = await handle.read(buffer, size, buffer.length - size, null);
      if (bytesRead === 0) break;
      size += bytesRead;
    }
    if (size > MAX_CA_FILE_BYTES) throw new Error(`larger than ${MAX_CA_FILE_BYTES} bytes`);
    return buffer.toString("utf8", 0, size);
  } finally {
    await handle.close();
  }
}

function pemCertificates(text: string): string {
  const blocks = text.match(PEM_BLOCK) ?? [];
  if (blocks.length === 0) throw new Error("no PEM certificate in it");
  for (const [index, block] of blocks.entries()) {
    try {
      new X509Certificate(block);
    } catch (error) {
      throw new Error(`certificate ${index + 1} does not parse: ${errorMessage(error)}`);
    }
  }
  return text;
}

function kindOf(stat: {
  isDirectory(): boolean;
  isFIFO(): boolean;
  isSocket(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
}): string {
  if (stat.isDirectory()) return "a directory";
  if (stat.isFIFO()) return "a FIFO";
  if (stat.isSocket()) return "a socket";
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return "a device";
  return "not a file";
}

function fileErrorText(error: unknown): string {
  const code = (error as { code?: string }).code;
  if (code === "ENOENT") return "no such file";
  if (code === "EACCES" || code === "EPERM") return "not readable (permission denied)";
  return code ?? errorMessage(error).split("\n")[0] ?? "cannot be opened";
}

/** Whether `path` names a usable CA file now (when a webhook is saved): its text, or why not. */
export async function checkCaFileContent(path: string): Promise<Checked<string>> {
  try {
    return { ok: true, value: await readCaFile(path) };
  } catch (error) {
    return { ok: false, problem: `cannot use ${JSON.stringify(path)}: ${errorMessage(error)}` };
  }
}
