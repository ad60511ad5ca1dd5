import { afterEach, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { join } from "node:path";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { parseAllowList } from "../../../lib/http/ssrf.ts";
import type { Claim, Delivery, Webhook } from "../../../lib/webhooks/model.ts";
import { renderDelivery } from "../../../lib/webhooks/rendering/render.ts";
import { sendAttempt } from "../../../lib/webhooks/sending/send.ts";
import { createCaFiles } from "../../../lib/webhooks/sending/tls-options.ts";
import { claimFixture } from "../../fakes/claim.ts";
import { HOOK_TEST_CERT_FILE, startTlsHookServer, TLS_DIR } from "../../fakes/tls-hook-server.ts";
import { SPEC_SECRET } from "../../fakes/webhook.ts";
import { type FakeEndpoint, gate, startFakeEndpoint } from "../../fakes/webhook-endpoint.ts";

const LOOPBACK = parseAllowList("127.0.0.1");
const CERT_FILE = HOOK_TEST_CERT_FILE;
const endpoints: FakeEndpoint[] = [];
const gates: Array<() => void> = [];

afterEach(async () => {
  for (const open of gates.splice(0)) open();
  for (const endpoint of endpoints.splice(0)) await endpoint.stop();
});

function endpoint(): FakeEndpoint {
  const fake = startFakeEndpoint();
  endpoints.push(fake);
  return fake;
}

function claimFor(webhook: Partial<Webhook>, delivery: Partial<Delivery> = {}): Claim {
  return claimFixture({
    id: 7,
    workerId: "w1",
    webhook,
    delivery: { leaseExpiresAt: 0, ...delivery },
  });
}

const toHookTest = { timeoutMs: 5000, allow: LOOPBACK, resolve: async () => ["127.0.0.1"] };

describe("TLS options per webhook", () => {
  test("a self-signed certificate is refused while verification is on (the default)", async () => {
    const tls = await startTlsHookServer();
    using _server = tls.server;
    const sent = await sendAttempt(claimFor({ url: tls.url("hook.test") }), toHookTest);
    expect(sent.record.outcome).toBe("network_error");
    expect(tls.hosts).toEqual([]);
  });

  test("verification off sends to the pinned address anyway, Host kept", async () => {
    const tls = await startTlsHookServer();
    using _server = tls.server;
    const sent = await sendAttempt(
      claimFor({ url: tls.url("hook.test"), sslVerification: false }),
      toHookTest,
    );
    expect(sent.record).toMatchObject({ outcome: "success", statusCode: 200 });
    expect(tls.hosts).toEqual([`hook.test:${tls.server.port}`]);
  });

  test("a CA file trusts the certificate, still checked against the URL's name", async () => {
    const tls = await startTlsHookServer();
    using _server = tls.server;
    const options = { ...toHookTest, caFiles: createCaFiles() };
    const sent = await sendAttempt(
      claimFor({ url: tls.url("hook.test"), caFile: CERT_FILE }),
      options,
    );
    expect(sent.record).toMatchObject({ outcome: "success", statusCode: 200 });
    const other = await sendAttempt(
      claimFor({ url: tls.url("other.test"), caFile: CERT_FILE }),
      options,
    );
    expect(other.record.outcome).toBe("network_error");
    expect(other.record.error).toContain("ALTNAME");
    expect(tls.hosts).toHaveLength(1);
  });

  test("a CA file that cannot be read is a recorded failure naming it, nothing sent", async () => {
    const tls = await startTlsHookServer();
    using _server = tls.server;
    const missing = join(TLS_DIR, "no-such-ca.pem");
    const sent = await sendAttempt(claimFor({ url: tls.url("hook.test"), caFile: missing }), {
      ...toHookTest,
      caFiles: createCaFiles(),
    });
    expect(sent.record.outcome).toBe("network_error");
    expect(sent.record.error).toStartWith(`Could not read the CA file "${missing}"`);
    const notPem = await sendAttempt(
      claimFor({ url: tls.url("hook.test"), caFile: join(TLS_DIR, "..", "webhook.ts") }),
      { ...toHookTest, caFiles: createCaFiles() },
    );
    expect(notPem.record.error).toEndWith("no PEM certificate in it");
    const endless = await sendAttempt(
      claimFor({ url: tls.url("hook.test"), caFile: "/dev/zero" }),
      { ...toHookTest, caFiles: createCaFiles() },
    );
    expect(endless.record.error).toBe(
      'Could not read the CA file "/dev/zero": not a regular file (a device)',
    );
    expect(tls.hosts).toEqual([]);
  });

  test("createCaFiles() reads a file once a minute at most", async () => {
    let reads = 0;
    let t = 0;
    const caText = createCaFiles(
      async () => {
        reads++;
        return "-----BEGIN CERTIFICATE-----\n…";
      },
      () => t,
    );
    await caText("/ca.pem");
    t = 59_999;
    await caText("/ca.pem");
    expect(reads).toBe(1);
    t = 60_000;
    await caText("/ca.pem");
    expect(reads).toBe(2);
  });
});

describe("timeout per webhook", () => {
  function silent() {
    const hold = gate();
    gates.push(hold.open);
    const fake = startFakeEndpoint(async () => {
      await hold.promise;
      return new Response("too late");
    });
    endpoints.push(fake);
    return fake;
  }

  test("a webhook's own timeout replaces WEBHOOK_TIMEOUT_MS", async () => {
    const fake = silent();
    const sent = await sendAttempt(claimFor({ url: fake.url, timeoutMs: 150 }), {
      timeoutMs: 60_000,
      allow: LOOPBACK,
    });
    expect(sent.record).toMatchObject({ outcome: "timeout", statusCode: null });
    expect(sent.record.error).toBe("Timed out after 150 ms (the webhook's timeout)");
  });

  test("a webhook's timeout is capped by what is left of the lease", async () => {
    const fake = silent();
    const sent = await sendAttempt(claimFor({ url: fake.url, timeoutMs: 60_000 }), {
      timeoutMs: 100,
      maxTimeoutMs: 150,
      allow: LOOPBACK,
    });
    expect(sent.record.error).toBe(
      "Timed out after 150 ms (the webhook's timeout 60000 ms, capped below the lease)",
    );
  });
});

describe("deliveries rendered at enqueue", () => {
  test("the rendered URL, headers and body are sent, and the signatures cover that body", async () => {
    const fake = endpoint();
    const webhook = {
      url: `http://127.0.0.1:${fake.port}/{{ model }}/{{ data.id }}`,
      headers: [["X-Sku", "{{ data.sku }}"]] as Array<[string, string]>,
      bodyTemplate: '{"text": {{ data.name | tojson }}}',
    };
    const defaultBody = JSON.stringify({
      event: "created",
      model: "item",
      data: { id: 9, sku: "Z-9", name: "Gear" },
      snapshots: {},
    });
    const rendered = renderDelivery(webhook, defaultBody);
    const sent = await sendAttempt(
      claimFor(
        { ...webhook, secret: SPEC_SECRET },
        { payload: rendered.payload, url: rendered.url, headers: rendered.headers },
      ),
      { timeoutMs: 5000, allow: LOOPBACK },
    );
    expect(sent.record.outcome).toBe("success");
    const [received] = fake.requests;
    expect(received?.path).toBe("/item/9");
    expect(received?.body).toBe('{"text": "Gear"}');
    expect(received?.headers["x-sku"]).toBe("Z-9");
    expect(
      new StandardWebhook(SPEC_SECRET).verify(received?.body ?? "", received?.headers ?? {}),
    ).toEqual({ text: "Gear" });
    // NetBox's X-Hook-Signature: HMAC-SHA512 of the exact body sent, keyed by the secret text.
    expect(received?.headers["x-hook-signature"]).toBe(
      createHmac("sha512", SPEC_SECRET).update('{"text": "Gear"}').digest("hex"),
    );
  });

  test("a rendered URL passes the SSRF guard like any other", async () => {
    const fake = endpoint();
    const sent = await sendAttempt(
      claimFor({ url: "https://hooks.example/{{ data.host }}" }, { url: `${fake.url}/in` }),
      { timeoutMs: 5000, allow: parseAllowList("") },
    );
    expect(sent.record.outcome).toBe("blocked");
    expect(fake.requests).toHaveLength(0);
  });

  test("a delivery queued before the URL became a template is not sent to the template text", async () => {
    const fake = endpoint();
    const sent = await sendAttempt(claimFor({ url: `${fake.url}/{{ data.id }}` }), {
      timeoutMs: 5000,
      allow: LOOPBACK,
    });
    expect(sent.record.outcome).toBe("template_error");
    expect(sent.record.error).toStartWith("The webhook's URL became a template after");
    expect(fake.requests).toHaveLength(0);
  });
});
