import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseAllowList } from "../../../lib/http/ssrf.ts";
import { checkSave } from "../../../lib/webhooks/definition/save.ts";
import type { Webhook } from "../../../lib/webhooks/model.ts";
import {
  createClientCerts,
  readClientCertificate,
} from "../../../lib/webhooks/sending/client-cert.ts";
import { sendAttempt } from "../../../lib/webhooks/sending/send.ts";
import { claimFixture } from "../../fakes/claim.ts";
import { tempDirs } from "../../fakes/temp-dirs.ts";
import {
  CLIENT_CERT_FILE,
  CLIENT_KEY_FILE,
  HOOK_TEST_CERT_FILE,
  OTHER_KEY_FILE,
  startTlsHookServer,
} from "../../fakes/tls-hook-server.ts";
import { webhookFixture } from "../../fakes/webhook.ts";

const toHookTest = {
  timeoutMs: 5000,
  allow: parseAllowList("127.0.0.1"),
  resolve: async () => ["127.0.0.1"],
};
const CLIENT = { clientCertFile: CLIENT_CERT_FILE, clientKeyFile: CLIENT_KEY_FILE };

function claimFor(webhook: Partial<Webhook>) {
  return claimFixture({ id: 7, workerId: "w1", webhook, delivery: { leaseExpiresAt: 0 } });
}

describe("client certificates (mutual TLS)", () => {
  test("a receiver that requires a client certificate gets the delivery with one, not without", async () => {
    const tls = await startTlsHookServer({ requireClientCert: true });
    using _server = tls.server;
    const webhook = { url: tls.url("hook.test"), caFile: HOOK_TEST_CERT_FILE };
    const options = { ...toHookTest, clientCerts: createClientCerts() };
    const without = await sendAttempt(claimFor(webhook), options);
    expect(without.record.outcome).toBe("network_error");
    expect(tls.hosts).toEqual([]);
    const withOne = await sendAttempt(claimFor({ ...webhook, ...CLIENT }), options);
    expect(withOne.record).toMatchObject({ outcome: "success", statusCode: 200 });
    expect(tls.hosts).toEqual([`hook.test:${tls.server.port}`]);
    // Another webhook to the same receiver does not ride on the connection the certificate opened.
    const after = await sendAttempt(claimFor(webhook), options);
    expect(after.record.outcome).toBe("network_error");
    expect(tls.hosts).toHaveLength(1);
  });

  test("a key file gone since the save ends the attempt naming the file, nothing sent", async () => {
    const tls = await startTlsHookServer({ requireClientCert: true });
    using _server = tls.server;
    const missing = "/nonexistent/client.key";
    const sent = await sendAttempt(
      claimFor({
        url: tls.url("hook.test"),
        caFile: HOOK_TEST_CERT_FILE,
        clientCertFile: CLIENT_CERT_FILE,
        clientKeyFile: missing,
      }),
      toHookTest,
    );
    expect(sent.record.outcome).toBe("network_error");
    expect(sent.record.error).toBe(
      `Could not use the client key file ${JSON.stringify(missing)}: no such file`,
    );
    expect(tls.hosts).toEqual([]);
  });

  test("readClientCertificate() refuses a key that is not the certificate's", async () => {
    expect(await readClientCertificate(CLIENT_CERT_FILE, CLIENT_KEY_FILE)).toMatchObject({
      cert: expect.stringContaining("BEGIN CERTIFICATE"),
      key: expect.stringContaining("PRIVATE KEY"),
    });
    await expect(readClientCertificate(CLIENT_CERT_FILE, OTHER_KEY_FILE)).rejects.toThrow(
      "the key does not match the certificate",
    );
  });
});

describe("saving a webhook with a client certificate", () => {
  const makeDir = tempDirs("client-cert-");
  const fields = { name: "mtls", url: "https://hook.test/in" };

  test("a matching pair is saved; a key that does not match is refused on client_key_file", async () => {
    expect(await checkSave({ before: null, fields: { ...fields, ...CLIENT } })).toMatchObject({
      ok: true,
    });
    const mismatch = await checkSave({
      before: null,
      fields: { ...fields, clientCertFile: CLIENT_CERT_FILE, clientKeyFile: OTHER_KEY_FILE },
    });
    expect(mismatch).toMatchObject({ ok: false, refused: { key: "clientKeyFile" } });
    if (mismatch.ok) throw new Error("expected a refusal");
    expect(mismatch.refused.problem).toStartWith(
      `cannot use ${JSON.stringify(OTHER_KEY_FILE)}: the key does not match the certificate`,
    );
  });

  test("one file without the other, a certificate that is not PEM, an encrypted key: refused", async () => {
    const alone = await checkSave({
      before: null,
      fields: { ...fields, clientCertFile: CLIENT_CERT_FILE },
    });
    expect(alone).toMatchObject({ ok: false, refused: { key: "clientCertFile" } });
    // A change keeps the stored key: giving the certificate alone is enough then.
    const before = webhookFixture({ ...CLIENT });
    expect(await checkSave({ before, fields: { clientCertFile: CLIENT_CERT_FILE } })).toMatchObject(
      { ok: true },
    );
    // Clearing one of a stored pair alone is refused; clearing both is fine.
    expect(await checkSave({ before, fields: { clientKeyFile: null } })).toMatchObject({
      ok: false,
      refused: { key: "clientKeyFile" },
    });
    expect(
      await checkSave({ before, fields: { clientCertFile: null, clientKeyFile: null } }),
    ).toMatchObject({ ok: true });

    const dir = makeDir();
    const notPem = join(dir, "client.crt");
    writeFileSync(notPem, "not a certificate");
    expect(
      await checkSave({ before: null, fields: { ...fields, ...CLIENT, clientCertFile: notPem } }),
    ).toMatchObject({
      ok: false,
      refused: {
        key: "clientCertFile",
        problem: `cannot use "${notPem}": no PEM certificate in it`,
      },
    });
    const encrypted = join(dir, "encrypted.key");
    writeFileSync(
      encrypted,
      "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n",
    );
    expect(
      await checkSave({ before: null, fields: { ...fields, ...CLIENT, clientKeyFile: encrypted } }),
    ).toMatchObject({ ok: false, refused: { key: "clientKeyFile" } });
    expect(
      await checkSave({
        before: null,
        fields: { ...fields, ...CLIENT, clientKeyFile: "/dev/zero" },
      }),
    ).toMatchObject({
      ok: false,
      refused: {
        key: "clientKeyFile",
        problem: 'cannot use "/dev/zero": not a regular file (a device)',
      },
    });
  });
});
