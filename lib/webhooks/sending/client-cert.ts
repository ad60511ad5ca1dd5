import { createPrivateKey, type KeyObject, X509Certificate } from "node:crypto";
import { errorMessage } from "../../text/error-message.ts";
import type { Webhook } from "../model.ts";
import { readPemFile } from "./ca-file.ts";

/** A client certificate (PEM, its chain after it) and its private key, as Bun's fetch takes them. */
export interface ClientCertificate {
  cert: string;
  key: string;
}

/** Why a client certificate cannot be used, and which of the two files it is about. */
export class ClientCertificateError extends Error {
  override name = "ClientCertificateError";
  constructor(
    readonly file: "cert" | "key",
    message: string,
  ) {
    super(message);
  }
}

const CERTIFICATE_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;
const KEY_BLOCK = /-----BEGIN ((?:RSA |EC |ENCRYPTED )?PRIVATE KEY)-----[\s\S]*?-----END \1-----/;

/**
 * Reads a webhook's client certificate and key (each a regular PEM file of at most 1 MiB, read
 * with a deadline, as a CA file) and checks them: the certificates parse, the key is one
 * unencrypted private key (the worker has no passphrase to give), and it is the first
 * certificate's key, so a receiver is never shown a pair that cannot complete a handshake.
 * Throws a ClientCertificateError naming the file, with a one-line message.
 */
export async function readClientCertificate(
  certPath: string,
  keyPath: string,
): Promise<ClientCertificate> {
  const cert = await readPemFile(certPath).catch((error: unknown) => {
    throw new ClientCertificateError("cert", errorMessage(error));
  });
  const key = await readPemFile(keyPath).catch((error: unknown) => {
    throw new ClientCertificateError("key", errorMessage(error));
  });
  const certificate = firstCertificate(cert);
  const privateKey = privateKeyOf(key);
  if (!certificate.checkPrivateKey(privateKey)) {
    throw new ClientCertificateError(
      "key",
      `the key does not match the certificate ${JSON.stringify(certPath)} (${certificate.subject.replace(/\n/g, ", ")})`,
    );
  }
  return { cert, key };
}

function firstCertificate(text: string): X509Certificate {
  const blocks = text.match(CERTIFICATE_BLOCK) ?? [];
  if (blocks.length === 0) throw new ClientCertificateError("cert", "no PEM certificate in it");
  const parsed: X509Certificate[] = [];
  for (const [index, block] of blocks.entries()) {
    try {
      parsed.push(new X509Certificate(block));
    } catch (error) {
      const message = `certificate ${index + 1} does not parse: ${errorMessage(error)}`;
      throw new ClientCertificateError("cert", message);
    }
  }
  return parsed[0] as X509Certificate;
}

function privateKeyOf(text: string): KeyObject {
  const block = KEY_BLOCK.exec(text);
  if (block === null) throw new ClientCertificateError("key", "no PEM private key in it");
  if (block[1] === "ENCRYPTED PRIVATE KEY" || /Proc-Type: 4,ENCRYPTED/.test(block[0])) {
    throw new ClientCertificateError(
      "key",
      "the key is encrypted: give the worker one without a passphrase",
    );
  }
  try {
    return createPrivateKey(block[0]);
  } catch (error) {
    throw new ClientCertificateError("key", `the key does not parse: ${errorMessage(error)}`);
  }
}

/** How long a pair of files is reused before it is read again (a renewed certificate is picked up). */
const CLIENT_CERT_TTL_MS = 60_000;
const MAX_CLIENT_CERTS = 100;

/**
 * A worker's client certificates, read when first needed and kept a minute (as its CA files).
 * A pair that cannot be read throws, naming the file; that attempt ends as a network error.
 */
export function createClientCerts(
  read: typeof readClientCertificate = readClientCertificate,
  now: () => number = Date.now,
) {
  const cache = new Map<string, { value: ClientCertificate; readAt: number }>();
  return async function clientCertificate(
    webhook: Pick<Webhook, "clientCertFile" | "clientKeyFile">,
  ): Promise<ClientCertificate | undefined> {
    const { clientCertFile: certPath, clientKeyFile: keyPath } = webhook;
    if (certPath == null || keyPath == null) return undefined;
    const id = `${certPath}\n${keyPath}`;
    const known = cache.get(id);
    if (known && now() - known.readAt < CLIENT_CERT_TTL_MS) return known.value;
    let value: ClientCertificate;
    try {
      value = await read(certPath, keyPath);
    } catch (error) {
      const path =
        error instanceof ClientCertificateError && error.file === "key" ? keyPath : certPath;
      const what = path === keyPath ? "client key file" : "client certificate file";
      throw new Error(`Could not use the ${what} ${JSON.stringify(path)}: ${errorMessage(error)}`);
    }
    if (cache.size >= MAX_CLIENT_CERTS) cache.clear();
    cache.set(id, { value, readAt: now() });
    return value;
  };
}

export type ClientCerts = ReturnType<typeof createClientCerts>;
