import { afterEach, beforeEach, expect, test } from "bun:test";
import { generateApiToken, hashApiToken } from "../../../lib/app/auth/api-tokens.ts";
import { createClient, testApp } from "../harness.ts";

const ADMIN = "read-token-test-admin-0123456";
let t: ReturnType<typeof testApp>;

beforeEach(() => {
  t = testApp({ adminToken: ADMIN });
});
afterEach(() => t.store.close());

test("a read token lists webhooks and deliveries but may not change, retry or replay them (403)", async () => {
  const token = generateApiToken();
  await t.store.tokens.create({
    name: "monitor",
    hash: hashApiToken(token),
    write: false,
    expiresAt: null,
  });
  const admin = createClient(t.app, { headers: { authorization: `Bearer ${ADMIN}` } });
  const reader = createClient(t.app, { headers: { authorization: `Bearer ${token}` } });
  const made = await admin.json("POST", "/api/webhooks", {
    name: "erp",
    url: "https://e.example/",
  });
  expect(made.status).toBe(201);
  await admin.json("POST", "/api/items", { sku: "A", name: "Bolt", quantity: 1 });

  for (const path of ["/api/webhooks", "/api/webhooks/1", "/api/deliveries", "/api/deliveries/1"]) {
    expect({ path, status: (await reader.request(path)).status }).toEqual({ path, status: 200 });
  }
  const writes: Array<[string, string, unknown]> = [
    ["POST", "/api/webhooks", { name: "other", url: "https://e.example/" }],
    ["PATCH", "/api/webhooks/1", { enabled: false }],
    ["DELETE", "/api/webhooks/1", undefined],
    ["POST", "/api/deliveries/retry", { ids: [1] }],
    ["POST", "/api/deliveries/replay", { webhook: 1 }],
  ];
  for (const [method, path, body] of writes) {
    const status = (await reader.json(method, path, body)).status;
    expect({ method, path, status }).toEqual({ method, path, status: 403 });
  }
  expect((await t.store.webhooks.list()).map((w) => [w.name, w.enabled])).toEqual([["erp", true]]);
  expect(await t.store.queue.stats()).toMatchObject({ queued: 1 });
});
