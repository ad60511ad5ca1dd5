import { describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { Webhook } from "standardwebhooks";
import {
  createSigner,
  generateSecret,
  isValidSecret,
  netboxSignature,
  standardWebhookHeaders,
  verifyStandardWebhook,
} from "../../../lib/webhooks/sending/signing.ts";

// The Standard Webhooks spec's test vector (shared/REFERENCE.md §4).
const VECTOR = {
  secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  messageId: "msg_p5jXN8AQM9LWM0D4loKWxJek",
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
};

function signedNow(secret: string, body: string, messageId = "msg_1") {
  return standardWebhookHeaders({
    secret,
    messageId,
    timestamp: Math.floor(Date.now() / 1000),
    body,
  });
}

describe("standardWebhookHeaders()", () => {
  test("produces the spec's test vector signature", () => {
    expect(standardWebhookHeaders(VECTOR)).toEqual({
      "webhook-id": VECTOR.messageId,
      "webhook-timestamp": "1614265330",
      "webhook-signature": VECTOR.signature,
    });
  });

  test("omits webhook-signature when no secret is set", () => {
    expect(standardWebhookHeaders({ ...VECTOR, secret: null })).toEqual({
      "webhook-id": VECTOR.messageId,
      "webhook-timestamp": "1614265330",
    });
  });

  test("signs so that the official standardwebhooks package verifies the request", () => {
    const secret = generateSecret();
    const body = JSON.stringify({ event: "item.created", data: { id: 1, name: "Ünïcode ✓" } });
    const headers = signedNow(secret, body);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  test("keeps the signature tied to the timestamp of the attempt", () => {
    const a = standardWebhookHeaders({ ...VECTOR, timestamp: VECTOR.timestamp + 1 });
    expect(a["webhook-signature"]).not.toBe(VECTOR.signature);
  });

  test("throws on a secret that is not base64", () => {
    expect(() => standardWebhookHeaders({ ...VECTOR, secret: "whsec_not base64!" })).toThrow(
      "Webhook secret is invalid",
    );
  });
});

describe("the official standardwebhooks package rejects", () => {
  const body = '{"event":"item.updated"}';

  test("a signature made with another secret", () => {
    const headers = signedNow(generateSecret(), body);
    expect(() => new Webhook(generateSecret()).verify(body, headers)).toThrow(
      "No matching signature found",
    );
  });

  test("a tampered body", () => {
    const secret = generateSecret();
    const headers = signedNow(secret, body);
    expect(() => new Webhook(secret).verify(`${body} `, headers)).toThrow(
      "No matching signature found",
    );
  });

  test("a timestamp more than 5 minutes old", () => {
    const secret = generateSecret();
    const headers = standardWebhookHeaders({
      secret,
      messageId: "msg_old",
      timestamp: Math.floor(Date.now() / 1000) - 301,
      body,
    });
    expect(() => new Webhook(secret).verify(body, headers)).toThrow("Message timestamp too old");
  });
});

describe("verifyStandardWebhook()", () => {
  const now = VECTOR.timestamp * 1000;

  test("accepts the spec's test vector", () => {
    const headers = {
      "webhook-id": VECTOR.messageId,
      "webhook-timestamp": String(VECTOR.timestamp),
      "webhook-signature": VECTOR.signature,
    };
    expect(verifyStandardWebhook(VECTOR.secret, VECTOR.body, headers, now)).toEqual({
      valid: true,
    });
  });

  test("accepts a signature the official package made, from a Headers object", () => {
    const secret = generateSecret();
    const signature = new Webhook(secret).sign("msg_x", new Date(now), "hello");
    const headers = new Headers({
      "Webhook-Id": "msg_x",
      "Webhook-Timestamp": String(VECTOR.timestamp),
      "Webhook-Signature": `v1,bm90IGl0 ${signature}`,
    });
    expect(verifyStandardWebhook(secret, "hello", headers, now)).toEqual({ valid: true });
  });

  test("accepts the same body given as bytes", () => {
    const headers = standardWebhookHeaders(VECTOR);
    const bytes = new TextEncoder().encode(VECTOR.body);
    expect(verifyStandardWebhook(VECTOR.secret, bytes, headers, now)).toEqual({ valid: true });
  });

  test("rejects a wrong secret, a tampered body and a tampered id", () => {
    const headers = standardWebhookHeaders(VECTOR);
    const invalid = { valid: false, reason: "no matching signature" };
    expect(verifyStandardWebhook(generateSecret(), VECTOR.body, headers, now)).toEqual(invalid);
    expect(verifyStandardWebhook(VECTOR.secret, `${VECTOR.body}x`, headers, now)).toEqual(invalid);
    expect(
      verifyStandardWebhook(VECTOR.secret, VECTOR.body, { ...headers, "webhook-id": "msg_2" }, now),
    ).toEqual(invalid);
  });

  test("rejects timestamps more than 5 minutes away either way, accepts exactly 5 minutes", () => {
    const headers = standardWebhookHeaders(VECTOR);
    expect(verifyStandardWebhook(VECTOR.secret, VECTOR.body, headers, now + 301_000)).toEqual({
      valid: false,
      reason: "timestamp too old: 301 s ago",
    });
    expect(verifyStandardWebhook(VECTOR.secret, VECTOR.body, headers, now - 301_000)).toEqual({
      valid: false,
      reason: "timestamp too new: 301 s ahead",
    });
    expect(verifyStandardWebhook(VECTOR.secret, VECTOR.body, headers, now + 300_000)).toEqual({
      valid: true,
    });
  });

  test("names the missing headers", () => {
    expect(verifyStandardWebhook(VECTOR.secret, VECTOR.body, { "webhook-id": "x" }, now)).toEqual({
      valid: false,
      reason: "missing header: webhook-timestamp, webhook-signature",
    });
  });

  test("rejects a non-numeric timestamp and a signature of another version", () => {
    const headers = standardWebhookHeaders(VECTOR);
    expect(
      verifyStandardWebhook(
        VECTOR.secret,
        VECTOR.body,
        { ...headers, "webhook-timestamp": "1614265330.5" },
        now,
      ),
    ).toEqual({ valid: false, reason: "webhook-timestamp is not unix seconds" });
    const v2 = { ...headers, "webhook-signature": VECTOR.signature.replace("v1,", "v2,") };
    expect(verifyStandardWebhook(VECTOR.secret, VECTOR.body, v2, now)).toEqual({
      valid: false,
      reason: "no matching signature",
    });
  });
});

describe("netboxSignature()", () => {
  test("is the hex HMAC-SHA512 of the body keyed with the secret's UTF-8 bytes", () => {
    const secret = "my-netbox-secret ✓";
    const body = '{"event": "created", "model": "site"}';
    const expected = createHmac("sha512", new TextEncoder().encode(secret))
      .update(new TextEncoder().encode(body))
      .digest("hex");
    expect(netboxSignature(secret, body)).toBe(expected);
    expect(netboxSignature(secret, body)).toMatch(/^[0-9a-f]{128}$/);
  });

  test("changes when one byte of the body changes", () => {
    expect(netboxSignature("s", '{"a":1}')).not.toBe(netboxSignature("s", '{"a":2}'));
  });
});

describe("createSigner()", () => {
  test("signs the spec's test vector, and again the same for the next message", () => {
    const signer = createSigner(VECTOR.secret);
    const sign = () => signer.standard(VECTOR.messageId, String(VECTOR.timestamp), VECTOR.body);
    expect(sign()).toBe(VECTOR.signature);
    expect(signer.standard("msg_other", "1", "{}")).not.toBe(VECTOR.signature);
    expect(sign()).toBe(VECTOR.signature);
  });

  test("gives standardWebhookHeaders' and netboxSignature's results for any body", () => {
    const signer = createSigner(VECTOR.secret);
    for (const body of ["", '{"a":1}', "é✓".repeat(500)]) {
      const headers = standardWebhookHeaders({
        secret: VECTOR.secret,
        messageId: "msg_1",
        timestamp: 42,
        body,
      });
      expect(signer.standard("msg_1", "42", body)).toBe(headers["webhook-signature"] ?? "");
      expect(signer.netbox(body)).toBe(netboxSignature(VECTOR.secret, body));
    }
  });

  test("throws on a secret that is not base64", () => {
    expect(() => createSigner("whsec_***")).toThrow(TypeError);
  });
});

describe("generateSecret() and isValidSecret()", () => {
  test("generateSecret() returns whsec_ + base64 of 24 random bytes, new each time", () => {
    const secret = generateSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(Buffer.from(secret.slice(6), "base64")).toHaveLength(24);
    expect(generateSecret()).not.toBe(secret);
    expect(isValidSecret(secret)).toBe(true);
  });

  test("isValidSecret() accepts the spec's secret and 16–64 byte keys only", () => {
    const b64 = (n: number) => Buffer.alloc(n, 7).toString("base64");
    expect(isValidSecret(VECTOR.secret)).toBe(true);
    expect(isValidSecret(`whsec_${b64(16)}`)).toBe(true);
    expect(isValidSecret(`whsec_${b64(64)}`)).toBe(true);
    expect(isValidSecret(`whsec_${b64(15)}`)).toBe(false);
    expect(isValidSecret(`whsec_${b64(65)}`)).toBe(false);
  });

  test("isValidSecret() rejects a missing prefix, non-base64 and missing padding", () => {
    expect(isValidSecret(VECTOR.secret.slice(6))).toBe(false);
    expect(isValidSecret("whsec_")).toBe(false);
    expect(isValidSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2La-aSw")).toBe(false);
    expect(
      isValidSecret(`whsec_${Buffer.alloc(20, 1).toString("base64").replace(/=+$/, "")}`),
    ).toBe(false);
  });
});
