import { describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { Webhook as StandardWebhook } from "standardwebhooks";
import type { Webhook } from "../../../lib/webhooks/model.ts";
import { buildRequest, USER_AGENT } from "../../../lib/webhooks/sending/request.ts";
import { webhookFixture } from "../../fakes/webhook.ts";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

function webhook(overrides: Partial<Webhook> = {}): Webhook {
  return webhookFixture({ secret: SECRET, ...overrides });
}

describe("buildRequest", () => {
  test("buildRequest() signs the spec's test vector exactly", () => {
    const request = buildRequest(
      webhook(),
      { messageId: "msg_p5jXN8AQM9LWM0D4loKWxJek", payload: '{"test": 2432232314}' },
      1614265330,
    );
    const headers = Object.fromEntries(request.headers.map(([k, v]) => [k.toLowerCase(), v]));
    expect(headers["webhook-id"]).toBe("msg_p5jXN8AQM9LWM0D4loKWxJek");
    expect(headers["webhook-timestamp"]).toBe("1614265330");
    expect(headers["webhook-signature"]).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  });

  test("buildRequest() output verifies with the standardwebhooks package", () => {
    const timestamp = Math.floor(Date.now() / 1000);
    const request = buildRequest(
      webhook(),
      { messageId: "msg_abc", payload: '{"a":1}' },
      timestamp,
    );
    const headers = Object.fromEntries(request.headers.map(([k, v]) => [k.toLowerCase(), v]));
    expect(new StandardWebhook(SECRET).verify(request.body ?? "", headers)).toEqual({ a: 1 });
  });

  test("buildRequest() adds NetBox's X-Hook-Signature: hex HMAC-SHA512 of the body", () => {
    const request = buildRequest(webhook(), { messageId: "msg_abc", payload: '{"a":1}' }, 1);
    const signature = request.headers.find(([k]) => k === "X-Hook-Signature")?.[1];
    expect(signature).toBe(createHmac("sha512", SECRET).update('{"a":1}').digest("hex"));
  });

  test("buildRequest() without a secret sends id and timestamp but no signatures", () => {
    const request = buildRequest(webhook({ secret: null }), { messageId: "m", payload: "{}" }, 5);
    const names = request.headers.map(([k]) => k.toLowerCase());
    expect(names).toContain("webhook-id");
    expect(names).toContain("webhook-timestamp");
    expect(names).not.toContain("webhook-signature");
    expect(names).not.toContain("x-hook-signature");
  });

  test("buildRequest() uses the webhook's method, content type and extra headers", () => {
    const request = buildRequest(
      webhook({
        method: "PUT",
        contentType: "application/x-www-form-urlencoded",
        headers: [
          ["Authorization", "Bearer t"],
          ["X-Custom", "1"],
        ],
      }),
      { messageId: "m", payload: '{"x":1}' },
      5,
    );
    expect(request.method).toBe("PUT");
    expect(request.url).toBe("https://hooks.example/in");
    expect(request.body).toBe('{"x":1}');
    expect(request.headers.slice(0, 4)).toEqual([
      ["Content-Type", "application/x-www-form-urlencoded"],
      ["User-Agent", USER_AGENT],
      ["Authorization", "Bearer t"],
      ["X-Custom", "1"],
    ]);
    expect(USER_AGENT).toMatch(/^hn-digest-webhooks\/\d+\.\d+\.\d+/);
  });

  test("buildRequest() lets extra headers replace Content-Type but never the signatures", () => {
    const request = buildRequest(
      webhook({
        headers: [
          ["content-type", "text/plain"],
          ["Webhook-Id", "forged"],
          ["X-Hook-Signature", "forged"],
        ],
      }),
      { messageId: "msg_real", payload: "{}" },
      5,
    );
    const lower = request.headers.map(([k, v]) => [k.toLowerCase(), v]);
    expect(lower.filter(([k]) => k === "content-type")).toEqual([["content-type", "text/plain"]]);
    expect(lower.filter(([k]) => k === "webhook-id")).toEqual([["webhook-id", "msg_real"]]);
    expect(lower.find(([k]) => k === "x-hook-signature")?.[1]).not.toBe("forged");
  });

  test("buildRequest() sends a GET without a body, signing the empty body it sends", () => {
    const request = buildRequest(
      webhook({ method: "GET" }),
      { messageId: "m", payload: '{"a":1}' },
      5,
    );
    expect(request.body).toBeNull();
    const signature = request.headers.find(([k]) => k === "X-Hook-Signature")?.[1];
    expect(signature).toBe(createHmac("sha512", SECRET).update("").digest("hex"));
  });
});
