import { join } from "node:path";

/** The test certificate and key for hook.test (self-signed, test-only). */
export const TLS_DIR = join(import.meta.dir, "tls");
export const HOOK_TEST_CERT_FILE = join(TLS_DIR, "hook-test.crt");
/** A client certificate (CN "webhooks worker") issued by client-ca.crt, its key, and a key of another. */
export const CLIENT_CA_FILE = join(TLS_DIR, "client-ca.crt");
export const CLIENT_CERT_FILE = join(TLS_DIR, "client.crt");
export const CLIENT_KEY_FILE = join(TLS_DIR, "client.key");
export const OTHER_KEY_FILE = join(TLS_DIR, "other.key");
/** An https proxy's certificate for 127.0.0.1 (self-signed), and its key. */
export const PROXY_CERT_FILE = join(TLS_DIR, "proxy.crt");
export const PROXY_KEY_FILE = join(TLS_DIR, "proxy.key");

/**
 * An https receiver for hook.test on 127.0.0.1 with the test certificate, recording each
 * request's Host; `trusting` is a fetch that trusts that certificate as a CA, so the sender's
 * own TLS settings are what a test exercises.
 */
export async function startTlsHookServer(options: { requireClientCert?: boolean } = {}) {
  const cert = await Bun.file(HOOK_TEST_CERT_FILE).text();
  const key = await Bun.file(join(TLS_DIR, "hook-test.key")).text();
  // A receiver that asks for a client certificate issued by client-ca.crt and refuses others.
  const mutual = options.requireClientCert
    ? { requestCert: true, rejectUnauthorized: true, ca: await Bun.file(CLIENT_CA_FILE).text() }
    : {};
  const hosts: Array<string | null> = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    tls: { cert, key, ...mutual },
    fetch(request) {
      hosts.push(request.headers.get("host"));
      return new Response("ok");
    },
  });
  const trusting: typeof fetch = Object.assign(
    (input: string | URL | Request, init?: RequestInit & { tls?: object }) =>
      fetch(input, { ...init, tls: { ...init?.tls, ca: cert } }),
    { preconnect: fetch.preconnect },
  );
  return { server, hosts, trusting, url: (name: string) => `https://${name}:${server.port}/in` };
}
