import { describe, expect, test } from "bun:test";
import { clientAddress, createReceiver, type ReceiverOptions } from "../../lib/receiver/app.ts";
import { generateSecret, standardWebhookHeaders } from "../../lib/webhooks/sending/signing.ts";
import { bodyOf, rawHttp, statusOf } from "../fakes/raw-http.ts";

const NOW = new Date("2020-04-07T17:44:02Z");

function receiver(options: Partial<ReceiverOptions> = {}) {
  const printed: string[] = [];
  const app = createReceiver({
    print: (text) => printed.push(text),
    showHeaders: true,
    pretty: false,
    now: () => NOW,
    ...options,
  });
  return { app, printed };
}

/** Bun hands the peer of an IPv4 client on a dual-stack socket as ::ffff:a.b.c.d. */
const mappedPeer = { requestIP: () => ({ address: "::ffff:127.0.0.1" }) };

describe("createReceiver()", () => {
  test("answers 200 'Webhook received!' and prints the request in NetBox's format", async () => {
    const { app, printed } = receiver();
    const response = await app.request(
      "http://localhost:9000/",
      {
        method: "POST",
        headers: { "Content-Type": "application/json", "User-Agent": "curl/7.58.0" },
        body: '{"foo": "bar"}',
      },
      mappedPeer,
    );
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("Webhook received!");
    expect(printed).toEqual([
      [
        '[1] Tue, 07 Apr 2020 17:44:02 GMT 127.0.0.1 "POST / HTTP/1.1" 200 -',
        "content-type: application/json",
        "user-agent: curl/7.58.0",
        "",
        '{"foo": "bar"}',
        "------------",
      ].join("\n"),
    ]);
  });

  test("answers any method on any path and numbers requests from 1", async () => {
    const { app, printed } = receiver({ showHeaders: false });
    const calls: Array<[string, string]> = [
      ["GET", "/"],
      ["PUT", "/a/b?x=1&y=%20"],
      ["DELETE", "/webhooks/42"],
      ["PATCH", "/deep/path/"],
      ["OPTIONS", "/x"],
    ];
    for (const [method, path] of calls) {
      const response = await app.request(`http://localhost${path}`, { method }, mappedPeer);
      expect(response.status).toBe(200);
    }
    expect(printed.map((block) => block.split("\n")[0])).toEqual([
      '[1] Tue, 07 Apr 2020 17:44:02 GMT 127.0.0.1 "GET / HTTP/1.1" 200 -',
      '[2] Tue, 07 Apr 2020 17:44:02 GMT 127.0.0.1 "PUT /a/b?x=1&y=%20 HTTP/1.1" 200 -',
      '[3] Tue, 07 Apr 2020 17:44:02 GMT 127.0.0.1 "DELETE /webhooks/42 HTTP/1.1" 200 -',
      '[4] Tue, 07 Apr 2020 17:44:02 GMT 127.0.0.1 "PATCH /deep/path/ HTTP/1.1" 200 -',
      '[5] Tue, 07 Apr 2020 17:44:02 GMT 127.0.0.1 "OPTIONS /x HTTP/1.1" 200 -',
    ]);
    expect(printed[0]).toBe(
      '[1] Tue, 07 Apr 2020 17:44:02 GMT 127.0.0.1 "GET / HTTP/1.1" 200 -\n(No body)\n------------',
    );
  });

  test("starts counting at 1 again in a new receiver", async () => {
    for (let round = 0; round < 2; round++) {
      const { app, printed } = receiver();
      await app.request("http://localhost/");
      expect(printed[0]).toStartWith("[1] ");
    }
  });

  test("prints '-' when the client address is unknown", async () => {
    const { app, printed } = receiver({ showHeaders: false });
    await app.request("http://localhost/");
    expect(printed[0]).toStartWith('[1] Tue, 07 Apr 2020 17:44:02 GMT - "GET / HTTP/1.1"');
  });

  test("pretty-prints JSON bodies with pretty true", async () => {
    const { app, printed } = receiver({ showHeaders: false, pretty: true });
    await app.request("http://localhost/", { method: "POST", body: '{"event":"item.created"}' });
    expect(printed[0]).toBe(
      '[1] Tue, 07 Apr 2020 17:44:02 GMT - "POST / HTTP/1.1" 200 -\n{\n  "event": "item.created"\n}\n------------',
    );
  });

  test("keeps only the first 64 KiB of a huge body and says how much came", async () => {
    const { app, printed } = receiver({ showHeaders: false });
    const response = await app.request("http://localhost/", {
      method: "POST",
      body: "y".repeat(300_000),
    });
    expect(response.status).toBe(200);
    expect(printed[0]).toBe(
      [
        '[1] Tue, 07 Apr 2020 17:44:02 GMT - "POST / HTTP/1.1" 200 -',
        "y".repeat(65536),
        "(body cut at 65536 bytes: 300000 bytes received)",
        "------------",
      ].join("\n"),
    );
  });

  test("shows a binary body as its size and hex", async () => {
    const { app, printed } = receiver({ showHeaders: false });
    await app.request("http://localhost/", {
      method: "POST",
      body: Uint8Array.from([0xff, 0xfe, 0x00, 0x41]),
    });
    expect(printed[0]).toContain(
      "\n(binary body: 4 bytes)\n00000000  ff fe 00 41                                       |...A|\n",
    );
  });
});

describe("createReceiver() with a secret", () => {
  const secret = generateSecret();
  const body = '{"event":"item.created"}';
  const signed = standardWebhookHeaders({
    secret,
    messageId: "msg_1",
    timestamp: NOW.getTime() / 1000,
    body,
  });

  async function send(
    headers: Record<string, string>,
    payload = body,
    secrets: string[] = [secret],
  ) {
    const { app, printed } = receiver({ showHeaders: false, secrets });
    const response = await app.request("http://localhost/", {
      method: "POST",
      headers,
      body: payload,
    });
    expect(response.status).toBe(200);
    return printed[0]?.split("\n").at(-2);
  }

  test("prints 'Signature: valid' for a correctly signed request", async () => {
    expect(await send(signed)).toBe("Signature: valid");
  });

  test("prints INVALID with the reason for a tampered body, another secret or no headers", async () => {
    expect(await send(signed, `${body} `)).toBe("Signature: INVALID (no matching signature)");
    const other = standardWebhookHeaders({
      secret: generateSecret(),
      messageId: "msg_1",
      timestamp: NOW.getTime() / 1000,
      body,
    });
    expect(await send(other)).toBe("Signature: INVALID (no matching signature)");
    expect(await send({})).toBe(
      "Signature: INVALID (missing header: webhook-id, webhook-timestamp, webhook-signature)",
    );
  });

  test("checks the timestamp against the receiver's clock", async () => {
    const old = standardWebhookHeaders({
      secret,
      messageId: "msg_1",
      timestamp: NOW.getTime() / 1000 - 600,
      body,
    });
    expect(await send(old)).toBe("Signature: INVALID (timestamp too old: 600 s ago)");
  });

  test("with several secrets, a request signed by any one of them is valid", async () => {
    const other = generateSecret();
    expect(await send(signed, body, [other, secret])).toBe("Signature: valid");
    // Two signatures, as during a rotation's overlap: one the receiver knows is enough.
    const both = standardWebhookHeaders({
      secret: other,
      messageId: "msg_1",
      timestamp: NOW.getTime() / 1000,
      body,
    });
    const overlap = {
      ...signed,
      "webhook-signature": `${both["webhook-signature"]} ${signed["webhook-signature"]}`,
    };
    expect(await send(overlap, body, [secret])).toBe("Signature: valid");
    expect(await send(signed, body, [other, generateSecret()])).toBe(
      "Signature: INVALID (no matching signature)",
    );
  });

  test("verifies the whole of a body larger than what it prints", async () => {
    const big = JSON.stringify({ data: "z".repeat(100_000) });
    const headers = standardWebhookHeaders({
      secret,
      messageId: "msg_big",
      timestamp: NOW.getTime() / 1000,
      body: big,
    });
    expect(await send(headers, big)).toBe("Signature: valid");
  });
});

describe("createReceiver() served by Bun.serve", () => {
  test("prints the peer's real address and the request line over real HTTP", async () => {
    const { app, printed } = receiver({ showHeaders: false, now: undefined });
    using server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: app.fetch });
    const response = await fetch(`http://127.0.0.1:${server.port}/hook?id=7`, {
      method: "POST",
      body: "hello",
    });
    expect(await response.text()).toBe("Webhook received!");
    expect(printed).toHaveLength(1);
    expect(printed[0]).toMatch(
      /^\[1\] \w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT 127\.0\.0\.1 "POST \/hook\?id=7 HTTP\/1\.1" 200 -\nhello\n------------$/,
    );
  });
});

describe("createReceiver() served on a dual-stack socket", () => {
  test("prints an IPv4 peer that Bun reports as ::ffff:127.0.0.1 as 127.0.0.1", async () => {
    const { app, printed } = receiver({ showHeaders: false });
    // An IPv6 socket bound to the IPv4-mapped loopback: still loopback-only, but Bun reports
    // the peer in its mapped form, as it does on a socket bound to "::".
    using server = Bun.serve({ port: 0, hostname: "::ffff:127.0.0.1", fetch: app.fetch });
    const response = await fetch(`http://127.0.0.1:${server.port}/`, { method: "POST", body: "x" });
    expect(await response.text()).toBe("Webhook received!");
    expect(printed[0]).toStartWith('[1] Tue, 07 Apr 2020 17:44:02 GMT 127.0.0.1 "POST / HTTP/1.1"');
  });
});

describe("clientAddress()", () => {
  test("prints an IPv4-mapped IPv6 address as plain IPv4 and leaves others alone", () => {
    expect(clientAddress("::ffff:127.0.0.1")).toBe("127.0.0.1");
    expect(clientAddress("::FFFF:10.1.2.3")).toBe("10.1.2.3");
    expect(clientAddress("127.0.0.1")).toBe("127.0.0.1");
    expect(clientAddress("::1")).toBe("::1");
    expect(clientAddress("2001:db8::1")).toBe("2001:db8::1");
    expect(clientAddress(undefined)).toBe("-");
  });

  test("answers HTTP/1.0 without Host with 200 and prints its request line", async () => {
    const { app, printed } = receiver({ showHeaders: false, now: undefined });
    using server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: app.fetch });
    const response = await rawHttp(server.port ?? 0, "GET /hook?x=1 HTTP/1.0\r\n\r\n");
    expect(statusOf(response)).toBe(200);
    expect(bodyOf(response)).toBe("Webhook received!");
    expect(printed[0]).toContain('"GET /hook?x=1 HTTP/1.1" 200 -');
  });

  test("with --secret, verifies a streamed 24 MB body while keeping only what it prints", async () => {
    const secret = generateSecret();
    const { app, printed } = receiver({ showHeaders: false, secrets: [secret], now: undefined });
    using server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: app.fetch });
    const piece = "y".repeat(1024 * 1024);
    const body = `{"data":"${piece.repeat(24)}"}`;
    const headers = standardWebhookHeaders({
      secret,
      messageId: "msg_stream",
      timestamp: Math.floor(Date.now() / 1000),
      body,
    });
    const send = (text: string) =>
      fetch(`http://127.0.0.1:${server.port}/`, {
        method: "POST",
        headers,
        // A stream: sent chunked, without Content-Length, as a sender that does not buffer would.
        body: new Blob([text]).stream(),
      });
    expect((await send(body)).status).toBe(200);
    expect((await send(`${body.slice(0, -2)}"}`.replace(/y"}$/, 'z"}'))).status).toBe(200);
    expect(printed.map((block) => block.split("\n").at(-2))).toEqual([
      "Signature: valid",
      "Signature: INVALID (no matching signature)",
    ]);
    expect(printed[0]).toContain(`(body cut at 65536 bytes: ${body.length} bytes received)`);
  });
});
