import { afterEach, describe, expect, test } from "bun:test";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { parseAllowList } from "../../../lib/http/ssrf.ts";
import type { Claim, Delivery, Webhook } from "../../../lib/webhooks/model.ts";
import { createSender, sendAttempt } from "../../../lib/webhooks/sending/send.ts";
import { claimFixture } from "../../fakes/claim.ts";
import { startTlsHookServer } from "../../fakes/tls-hook-server.ts";
import {
  type FakeEndpoint,
  gate,
  type Responder,
  startFakeEndpoint,
} from "../../fakes/webhook-endpoint.ts";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const LOOPBACK = parseAllowList("127.0.0.1");
const endpoints: FakeEndpoint[] = [];
const gates: Array<() => void> = [];

afterEach(async () => {
  for (const open of gates.splice(0)) open();
  for (const endpoint of endpoints.splice(0)) await endpoint.stop();
});

function endpoint(respond?: Responder): FakeEndpoint {
  const fake = startFakeEndpoint(respond);
  endpoints.push(fake);
  return fake;
}

/** An endpoint that takes requests and answers none before the test ends. */
function neverAnswering(): FakeEndpoint {
  const hold = gate();
  gates.push(hold.open);
  return endpoint(async () => {
    await hold.promise;
    return new Response("too late");
  });
}

function claimFor(
  url: string,
  overrides: Partial<Webhook> = {},
  delivery: Partial<Delivery> = {},
): Claim {
  const webhook = { url, headers: [["X-Extra", "yes"]] as Array<[string, string]>, ...overrides };
  return claimFixture({
    id: 7,
    workerId: "w1",
    webhook,
    delivery: { leaseExpiresAt: 0, ...delivery },
  });
}

describe("sendAttempt", () => {
  test("sendAttempt() posts the signed payload and records a 2xx as success", async () => {
    const fake = endpoint(() => new Response("Webhook received!", { headers: { "X-Reply": "1" } }));
    const now = Date.now();
    const sent = await sendAttempt(claimFor(`${fake.url}/in?x=1`), {
      timeoutMs: 5000,
      allow: LOOPBACK,
      now: () => now,
    });
    expect(sent.outcome).toBe("success");
    expect(sent.record).toMatchObject({
      startedAt: now,
      statusCode: 200,
      outcome: "success",
      error: null,
      responseBody: "Webhook received!",
    });
    expect(sent.record.responseHeaders).toContain("x-reply: 1");
    expect(sent.record.durationMs).toBeGreaterThan(0);

    const [received] = fake.requests;
    expect(received?.method).toBe("POST");
    expect(received?.path).toBe("/in?x=1");
    expect(received?.body).toBe('{"event":"created","data":{"id":1}}');
    expect(received?.headers["content-type"]).toBe("application/json");
    expect(received?.headers["x-extra"]).toBe("yes");
    expect(received?.headers["user-agent"]).toMatch(/^hn-digest-webhooks\//);
    expect(received?.headers["webhook-id"]).toBe("msg_0123456789abcdefghijklmn");
    expect(received?.headers["webhook-timestamp"]).toBe(String(Math.floor(now / 1000)));
    expect(received?.headers.connection).toBe("keep-alive");
    // The receiving side checks the signature with the reference implementation.
    expect(
      new StandardWebhook(SECRET).verify(received?.body ?? "", received?.headers ?? {}),
    ).toEqual({
      event: "created",
      data: { id: 1 },
    });
  });

  test("sendAttempt() sends the same webhook-id on every attempt, with a fresh timestamp", async () => {
    const fake = endpoint(() => new Response("no", { status: 500 }));
    let clock = 1_800_000_000_000;
    const options = { timeoutMs: 5000, allow: LOOPBACK, now: () => clock };
    await sendAttempt(claimFor(fake.url), options);
    clock += 60_000;
    await sendAttempt({ ...claimFor(fake.url), attempt: 2 }, options);
    const [first, second] = fake.requests;
    expect(first?.headers["webhook-id"]).toBe(second?.headers["webhook-id"] ?? "");
    expect(
      Number(second?.headers["webhook-timestamp"]) - Number(first?.headers["webhook-timestamp"]),
    ).toBe(60);
  });

  test("sendAttempt() records a 5xx as an http_error with the status line", async () => {
    const fake = endpoint(
      () => new Response("down", { status: 503, statusText: "Service Unavailable" }),
    );
    const sent = await sendAttempt(claimFor(fake.url), { timeoutMs: 5000, allow: LOOPBACK });
    expect(sent.record).toMatchObject({
      statusCode: 503,
      outcome: "http_error",
      error: "HTTP 503 Service Unavailable",
      responseBody: "down",
    });
  });

  test("sendAttempt() does not follow redirects: a 3xx is a failure", async () => {
    const fake = endpoint((request) =>
      request.path === "/moved"
        ? new Response("should not be reached")
        : new Response(null, { status: 302, headers: { Location: "/moved" } }),
    );
    const sent = await sendAttempt(claimFor(`${fake.url}/in`), {
      timeoutMs: 5000,
      allow: LOOPBACK,
    });
    expect(sent.record.statusCode).toBe(302);
    expect(sent.record.outcome).toBe("http_error");
    expect(sent.record.error).toContain("redirects are not followed (Location: /moved)");
    expect(fake.requests.map((r) => r.path)).toEqual(["/in"]);
  });

  test("sendAttempt() gives up after the timeout when the endpoint never answers", async () => {
    const fake = neverAnswering();
    const sent = await sendAttempt(claimFor(fake.url), { timeoutMs: 150, allow: LOOPBACK });
    expect(sent.record).toMatchObject({ outcome: "timeout", statusCode: null });
    expect(sent.record.error).toBe("Timed out after 150 ms (WEBHOOK_TIMEOUT_MS)");
    expect(fake.requests).toHaveLength(1);
  });

  test("sendAttempt() counts resolving the host against the timeout", async () => {
    const fake = endpoint();
    const started = performance.now();
    const sent = await sendAttempt(claimFor(`http://hook.test:${fake.port}/`), {
      timeoutMs: 150,
      allow: LOOPBACK,
      resolve: () => new Promise<string[]>(() => {}),
    });
    expect(sent.record).toMatchObject({ outcome: "timeout", statusCode: null });
    expect(sent.record.error).toBe("Timed out after 150 ms (WEBHOOK_TIMEOUT_MS)");
    expect(performance.now() - started).toBeLessThan(5000);
    expect(fake.requests).toHaveLength(0);
  });

  test("sendAttempt() sends plain http to the address it checked, with the URL's Host", async () => {
    const fake = endpoint();
    const answers = [["127.0.0.1"], ["169.254.169.254"]];
    // hook.test resolves nowhere else: fetch doing its own lookup would fail. A second lookup
    // (rebinding to the metadata address) is never made.
    const sent = await sendAttempt(claimFor(`http://hook.test:${fake.port}/in?x=1`), {
      timeoutMs: 5000,
      allow: LOOPBACK,
      resolve: async () => answers.shift() ?? [],
    });
    expect(sent.record).toMatchObject({ outcome: "success", statusCode: 200 });
    expect(answers).toHaveLength(1);
    expect(fake.requests[0]?.headers.host).toBe(`hook.test:${fake.port}`);
    expect(fake.requests[0]?.path).toBe("/in?x=1");
  });

  test("sendAttempt() sends https to the checked address too, verifying the certificate for the URL's name", async () => {
    // A self-signed certificate for hook.test, trusted through a fetch that adds it as CA.
    const { server: tls, hosts, trusting } = await startTlsHookServer();
    using server = tls;
    const options = {
      timeoutMs: 5000,
      allow: LOOPBACK,
      fetch: trusting,
      resolve: async () => ["127.0.0.1"],
    };
    const sent = await sendAttempt(claimFor(`https://hook.test:${server.port}/in`), options);
    expect(sent.record).toMatchObject({ outcome: "success", statusCode: 200 });
    expect(hosts).toEqual([`hook.test:${server.port}`]);

    // The same address under another name: the certificate does not match, nothing is sent.
    const other = await sendAttempt(claimFor(`https://other.test:${server.port}/in`), options);
    expect(other.record.outcome).toBe("network_error");
    expect(other.record.error).toContain("ALTNAME");
    expect(hosts).toHaveLength(1);
  });

  test("a name's check is remembered for 30 s with its checked address: Host and the certificate's name stay the URL's", async () => {
    const { server: tls, hosts, trusting } = await startTlsHookServer();
    using server = tls;
    const clock = { t: Date.UTC(2030, 0, 1) };
    let lookups = 0;
    const send = createSender({
      timeoutMs: 5000,
      allow: LOOPBACK,
      fetch: trusting,
      now: () => clock.t,
      // hook.test exists only here: a request that skipped the checked address would fail.
      resolve: async () => {
        lookups++;
        return ["127.0.0.1"];
      },
      checks: new Map(),
    });
    const url = `https://hook.test:${server.port}/in`;
    const call = { maxTimeoutMs: undefined, signal: undefined };
    for (let n = 0; n < 3; n++) {
      const sent = await send(claimFor(url), call);
      expect(sent.record).toMatchObject({ outcome: "success", statusCode: 200 });
    }
    expect(lookups).toBe(1);
    clock.t += 30_000;
    await send(claimFor(url), call);
    expect(lookups).toBe(2);
    expect(hosts).toEqual(Array.from({ length: 4 }, () => `hook.test:${server.port}`));
  });

  test("a refusal is remembered too, for 30 s: a name's and an IP literal's", async () => {
    const clock = { t: Date.UTC(2030, 0, 1) };
    let lookups = 0;
    const send = createSender({
      timeoutMs: 5000,
      allow: parseAllowList(""),
      now: () => clock.t,
      resolve: async () => {
        lookups++;
        return ["127.0.0.1"];
      },
      checks: new Map(),
    });
    const call = { maxTimeoutMs: undefined, signal: undefined };
    const byName = claimFor("http://hook.test:9/in");
    const byAddress = claimFor("http://127.0.0.1:9/in");
    for (const claim of [byName, byAddress, byName, byAddress]) {
      const sent = await send(claim, call);
      expect(sent.record.outcome).toBe("blocked");
    }
    expect(lookups).toBe(1);
    clock.t += 30_000;
    await send(byName, call);
    await send(byAddress, call);
    expect(lookups).toBe(2);
  });

  test("an IP literal allowed, then made this machine's own address, is refused once 30 s have passed", async () => {
    const clock = { t: Date.UTC(2030, 0, 1) };
    const ADDRESS = "93.184.216.34";
    // The machine's interfaces as os.networkInterfaces() gives them: an interface comes up later.
    const loopback = { address: "127.0.0.1", netmask: "255.0.0.0", family: "IPv4" as const };
    const lo = { ...loopback, mac: "00:00:00:00:00:00", internal: true, cidr: "127.0.0.1/8" };
    const interfaces: Record<string, (typeof lo)[]> = { lo: [lo] };
    const eth = { ...lo, address: ADDRESS, internal: false, cidr: `${ADDRESS}/24` };
    const sentTo: string[] = [];
    const send = createSender({
      timeoutMs: 5000,
      allow: parseAllowList(""),
      now: () => clock.t,
      interfaces: () => interfaces,
      // Stands in for the network: nothing leaves the machine.
      fetch: (async (input: string | URL | Request) => {
        sentTo.push(String(input instanceof Request ? input.url : input));
        return new Response("ok");
      }) as typeof fetch,
      checks: new Map(),
    });
    const call = { maxTimeoutMs: undefined, signal: undefined };
    const claim = claimFor(`http://${ADDRESS}/in`);
    expect((await send(claim, call)).record.outcome).toBe("success");
    interfaces.eth0 = [eth];
    clock.t += 29_999;
    expect((await send(claim, call)).record.outcome).toBe("success");
    clock.t += 1;
    const refused = await send(claim, call);
    expect(refused.record).toMatchObject({ outcome: "blocked" });
    expect(refused.record.error).toBe(
      `refused ${ADDRESS} (this machine's own address): set WEBHOOK_ALLOWED_HOSTS=${ADDRESS}:80 to allow it`,
    );
    expect(sentTo).toEqual([`http://${ADDRESS}/in`, `http://${ADDRESS}/in`]);
  });

  test("sendAttempt() records a refused connection as a network error naming the address", async () => {
    const closed = startFakeEndpoint();
    await closed.stop();
    const sent = await sendAttempt(claimFor(closed.url), { timeoutMs: 5000, allow: LOOPBACK });
    expect(sent.record.outcome).toBe("network_error");
    expect(sent.record.statusCode).toBeNull();
    expect(sent.record.error).toBe(`connection refused by 127.0.0.1:${new URL(closed.url).port}`);
  });

  test("sendAttempt() names the host beside the address it resolved to", async () => {
    const closed = startFakeEndpoint();
    await closed.stop();
    const port = new URL(closed.url).port;
    const sent = await sendAttempt(claimFor(`http://hook.test:${port}/in`), {
      timeoutMs: 5000,
      allow: LOOPBACK,
      resolve: async () => ["127.0.0.1"],
    });
    expect(sent.record.error).toBe(`connection refused by 127.0.0.1:${port} (hook.test)`);
  });

  test("sendAttempt() refuses a loopback URL that is not allowed, naming WEBHOOK_ALLOWED_HOSTS", async () => {
    const fake = endpoint();
    const sent = await sendAttempt(claimFor(fake.url), { timeoutMs: 5000, allow: [] });
    expect(sent.record.outcome).toBe("blocked");
    expect(sent.record.error).toContain(`WEBHOOK_ALLOWED_HOSTS=127.0.0.1:${fake.port}`);
    expect(fake.requests).toHaveLength(0);
  });

  test("sendAttempt() records the URL it went to or was refused for: the rendered one when templated, none for an unrendered template", async () => {
    const fake = endpoint();
    const sent = await sendAttempt(claimFor(fake.url), { timeoutMs: 5000, allow: LOOPBACK });
    expect(sent.record).toMatchObject({ outcome: "success", url: fake.url });
    const rendered = `${fake.url}/items/1`;
    const templated = claimFor("http://127.0.0.1:9/{{ data.id }}", {}, { url: rendered });
    expect((await sendAttempt(templated, { timeoutMs: 5000, allow: LOOPBACK })).record.url).toBe(
      rendered,
    );
    expect(fake.requests.map((r) => r.path)).toEqual(["/", "/items/1"]);
    const refused = await sendAttempt(claimFor(fake.url), { timeoutMs: 5000, allow: [] });
    expect(refused.record).toMatchObject({ outcome: "blocked", url: fake.url });
    const unrendered = claimFor("http://127.0.0.1:9/{{ data.id }}");
    const none = await sendAttempt(unrendered, { timeoutMs: 5000, allow: LOOPBACK });
    expect(none.record).toMatchObject({ outcome: "template_error", url: null });
  });

  test("sendAttempt() checks resolved addresses, not just literals", async () => {
    const sent = await sendAttempt(claimFor("http://metadata.internal.example/"), {
      timeoutMs: 5000,
      allow: [],
      resolve: async () => ["169.254.169.254"],
    });
    expect(sent.record.outcome).toBe("blocked");
    expect(sent.record.error).toContain("169.254.169.254");
  });

  test("sendAttempt() keeps at most 4 KiB of the response body and headers", async () => {
    const fake = endpoint(
      () =>
        new Response("é".repeat(512 * 1024), {
          status: 500,
          headers: { "X-Big": "h".repeat(8000) },
        }),
    );
    const sent = await sendAttempt(claimFor(fake.url), { timeoutMs: 5000, allow: LOOPBACK });
    const body = sent.record.responseBody ?? "";
    // 2-byte characters: 2048 of them fill 4096 bytes exactly.
    expect(new TextEncoder().encode(body).byteLength).toBe(4096);
    expect(body).toBe("é".repeat(2048));
    expect(
      new TextEncoder().encode(sent.record.responseHeaders ?? "").byteLength,
    ).toBeLessThanOrEqual(4096);
  });

  test("sendAttempt() passes Retry-After on", async () => {
    const fake = endpoint(
      () => new Response("slow down", { status: 429, headers: { "Retry-After": "120" } }),
    );
    const sent = await sendAttempt(claimFor(fake.url), { timeoutMs: 5000, allow: LOOPBACK });
    expect(sent.statusCode).toBe(429);
    expect(sent.retryAfterMs).toBe(120_000);
  });

  test("sendAttempt() throws when the worker aborts it (hard shutdown)", async () => {
    const fake = neverAnswering();
    const controller = new AbortController();
    const sending = sendAttempt(claimFor(fake.url), {
      timeoutMs: 60_000,
      allow: LOOPBACK,
      signal: controller.signal,
    });
    await fake.waitForRequests(1);
    controller.abort(new Error("shutting down"));
    await expect(sending).rejects.toThrow("shutting down");
  });

  test("sendAttempt() records a secret that cannot sign as a failed attempt", async () => {
    const fake = endpoint();
    const sent = await sendAttempt(claimFor(fake.url, { secret: "whsec_***" }), {
      timeoutMs: 5000,
      allow: LOOPBACK,
    });
    expect(sent.record.outcome).toBe("network_error");
    expect(sent.record.error).toContain("Could not build the request");
    expect(fake.requests).toHaveLength(0);
  });
});
