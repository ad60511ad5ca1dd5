import { join } from "node:path";

/** The test certificate and key for hook.test (self-signed, test-only). */
export const TLS_DIR = join(import.meta.dir, "tls");
export const HOOK_TEST_CERT_FILE = join(TLS_DIR, "hook-test.crt");

/**
 * An https receiver for hook.test on 127.0.0.1 with the test certificate, recording each
 * request's Host; `trusting` is a fetch that trusts that certificate as a CA, so the sender's
 * own TLS settings are what a test exercises.
 */
export async function startTlsHookServer() {
  const cert = await Bun.file(HOOK_TEST_CERT_FILE).text();
  const key = await Bun.file(join(TLS_DIR, "hook-test.key")).text();
  const hosts: Array<string | null> = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    tls: { cert, key },
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
