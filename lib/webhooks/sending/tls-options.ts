import type { Webhook } from "../model.ts";
import { readCaFile } from "./ca-file.ts";
import type { ClientCertificate } from "./client-cert.ts";

/** Bun's fetch `tls` options this sender sets. */
export interface TlsOptions {
  serverName?: string;
  rejectUnauthorized?: boolean;
  /** PEM text of the CAs to trust instead of the system's. */
  ca?: string;
  /** The client certificate and key (PEM) for a receiver that asks for one. */
  cert?: string;
  key?: string;
}

/** Reads a CA file's PEM text (throws when it cannot). */
export type ReadCaFile = (path: string) => Promise<string>;

/** How long a CA file's text is reused before it is read again (a replaced file is picked up). */
const CA_FILE_TTL_MS = 60_000;
const MAX_CA_FILES = 100;

/**
 * A worker's CA files, read when first needed and kept a minute (a worker sends many requests
 * per webhook; reading the file for each would cost a system call per attempt).
 */
export function createCaFiles(read: ReadCaFile = readCaFile, now: () => number = Date.now) {
  const cache = new Map<string, { text: string; readAt: number }>();
  return async function caText(path: string): Promise<string> {
    const known = cache.get(path);
    if (known && now() - known.readAt < CA_FILE_TTL_MS) return known.text;
    // readCaFile refuses what is not a regular file of PEM certificates (a FIFO at once).
    const text = await read(path);
    if (cache.size >= MAX_CA_FILES) cache.clear();
    cache.set(path, { text, readAt: now() });
    return text;
  };
}

export type CaFiles = ReturnType<typeof createCaFiles>;

/**
 * The webhook's TLS choices (NetBox's ssl_verification and CA file path) over the options the
 * address pinning sets: the server name stays, so a verified certificate is still checked
 * against the URL's host. Undefined when there is nothing to set. `ca` is the CA file's text,
 * read by the caller (caFileText) only for a webhook that names one; `client` the client
 * certificate and key (client-cert.ts), read likewise.
 */
export function tlsOptionsFor(
  webhook: Pick<Webhook, "sslVerification">,
  pinned: TlsOptions | undefined,
  ca?: string,
  client?: ClientCertificate,
): TlsOptions | undefined {
  let tls = pinned;
  // Only an explicit false turns verification off.
  if (webhook.sslVerification === false) tls = { ...tls, rejectUnauthorized: false };
  if (ca !== undefined) tls = { ...tls, ca };
  if (client !== undefined) tls = { ...tls, cert: client.cert, key: client.key };
  return tls;
}

/** The text of the webhook's CA file; throws naming the file when it cannot be read. */
export async function caFileText(path: string, caFiles: CaFiles): Promise<string> {
  try {
    return await caFiles(path);
  } catch (error) {
    const reason = error instanceof Error ? error.message.split("\n")[0] : String(error);
    throw new Error(`Could not read the CA file ${JSON.stringify(path)}: ${reason}`);
  }
}
