import { afterEach, beforeEach, expect, test } from "bun:test";
import { generateApiToken, hashApiToken } from "../../../lib/app/auth/api-tokens.ts";
import { change } from "../../fakes/change.ts";
import { attemptRecord, enqueueAndClaim } from "../../fakes/delivery.ts";
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

test("a read token gets header values and URL credentials as ***; a write token and ADMIN_TOKEN as stored", async () => {
  const tokens = await readAndWriteTokens();
  const webhook = await t.store.webhooks.create({
    name: "erp",
    url: "https://user:s3cret-pw@e.example/{{ data.id }}?api_key=k3y-123&id=7&flag",
    headers: [
      ["Authorization", "Bearer erp-credential"],
      ["X-Api-Key", "key-credential"],
      ["X-Empty", ""],
    ],
  });
  await t.store.queue.enqueue(change());
  const answers = async (token: string) => {
    const client = createClient(t.app, { headers: { authorization: `Bearer ${token}` } });
    const list = (await (await client.request("/api/webhooks")).json()) as {
      webhooks: Array<{ url: string; headers: string[] }>;
    };
    const one = (await (await client.request(`/api/webhooks/${webhook.id}`)).json()) as {
      url: string;
      headers: string[];
    };
    const deliveries = (await (await client.request("/api/deliveries")).json()) as {
      deliveries: Array<{ url: string | null }>;
    };
    return { list: list.webhooks[0], one, deliveries };
  };

  // What each token is answered: a read token gets the values of credentials as ***.
  const as = (query: string, headers: string[]) => ({
    url: `https://user:***@e.example/{{ data.id }}?${query}&flag`,
    headers,
    deliveryUrl: `https://user:***@e.example/1?${query}&flag`,
  });
  const masked = as("api_key=***&id=***", ["Authorization: ***", "X-Api-Key: ***", "X-Empty: "]);
  const shown = as("api_key=k3y-123&id=7", [
    "Authorization: Bearer erp-credential",
    "X-Api-Key: key-credential",
    "X-Empty: ",
  ]);
  for (const [token, expected] of [
    [tokens.read, masked],
    [tokens.write, shown],
    [ADMIN, shown],
  ] as const) {
    const seen = await answers(token);
    const { url, headers } = expected;
    expect(seen.list).toMatchObject({ url, headers });
    expect(seen.one).toMatchObject({ url, headers });
    expect(seen.deliveries.deliveries.map((d) => d.url)).toEqual([expected.deliveryUrl]);
  }
  expect(JSON.stringify(await answers(tokens.read))).not.toMatch(/credential|k3y-123|s3cret-pw/);
});

test("a read token sees no URL query credential in a delivery's errors and answer headers (a redirect's Location)", async () => {
  const tokens = await readAndWriteTokens();
  await t.store.webhooks.create({ name: "erp", url: "http://e.example/hook?api_key=k3y-123" });
  const { id, claim } = await enqueueAndClaim(t.store);
  // The usual http → https redirect, which keeps the query: the worker records where it pointed.
  const location = "https://e.example/hook?api_key=k3y-123";
  await t.store.queue.finish(
    claim,
    {
      ...attemptRecord(301, { responseHeaders: `location: ${location}` }),
      error: `HTTP 301 Moved Permanently: redirects are not followed (Location: ${location})`,
    },
    { state: "failed" },
  );
  const seen = async (token: string) => {
    const client = createClient(t.app, { headers: { authorization: `Bearer ${token}` } });
    const list = await (await client.request("/api/deliveries")).text();
    const one = await (await client.request(`/api/deliveries/${id}`)).text();
    return `${list}\n${one}`;
  };
  const read = await seen(tokens.read);
  expect(read).not.toContain("k3y-123");
  expect(read).toContain("Location: https://e.example/hook?api_key=***");
  expect(read).toContain("location: https://e.example/hook?api_key=***");
  // Write tokens see what was recorded, as before.
  expect(await seen(tokens.write)).toContain(`(Location: ${location})`);
});

test("a read token does not get the webhook's credentials back from a receiver that echoes the request", async () => {
  const tokens = await readAndWriteTokens();
  await t.store.webhooks.create({
    name: "echo",
    url: "https://user:s3cret-pw@e.example/anything?api_key=k3y-123",
    headers: [["Authorization", "Bearer erp-credential"]],
  });
  const { id, claim } = await enqueueAndClaim(t.store);
  // What httpbin's /anything or a request bin answers: the request as it came.
  const echo = JSON.stringify({
    headers: { Authorization: "Bearer erp-credential" },
    url: "https://e.example/anything?api_key=k3y-123",
    auth: "user:s3cret-pw",
    token: "erp-credential",
  });
  await t.store.queue.finish(
    claim,
    {
      ...attemptRecord(400, { responseHeaders: "x-echo: Bearer erp-credential" }),
      responseBody: echo,
    },
    { state: "failed" },
  );
  const seen = async (token: string) => {
    const client = createClient(t.app, { headers: { authorization: `Bearer ${token}` } });
    return (await client.request(`/api/deliveries/${id}`)).text();
  };
  expect(await seen(tokens.read)).not.toMatch(/erp-credential|k3y-123|s3cret-pw/);
  expect(await seen(tokens.write)).toContain("Bearer erp-credential");
});

test("a read token cannot read credentials through the admin's pages either: 403 there, as for a write", async () => {
  const tokens = await readAndWriteTokens();
  const webhook = await t.store.webhooks.create({
    name: "erp",
    url: "https://e.example/hook?api_key=k3y-123",
    headers: [["Authorization", "Bearer erp-credential"]],
  });
  const get = (path: string, token: string) =>
    t.app.request(path, { headers: { authorization: `Bearer ${token}` } });
  for (const path of [
    "/admin/webhooks",
    `/admin/webhooks/${webhook.id}`,
    "/admin/background-tasks",
  ]) {
    const refused = await get(path, tokens.read);
    expect({ path, status: refused.status }).toEqual({ path, status: 403 });
    expect(await refused.text()).not.toMatch(/erp-credential|k3y-123/);
  }
  expect((await get(`/admin/webhooks/${webhook.id}`, tokens.write)).status).toBe(200);
  // What a read token is for still answers it.
  expect((await get(`/api/webhooks/${webhook.id}`, tokens.read)).status).toBe(200);
  expect((await get("/metrics", tokens.read)).status).toBe(200);
});

/** Two API tokens named for what they may do: `read` (GET and HEAD) and `write`. */
async function readAndWriteTokens(): Promise<{ read: string; write: string }> {
  const tokens = { read: generateApiToken(), write: generateApiToken() };
  for (const [name, token] of Object.entries(tokens)) {
    await t.store.tokens.create({
      name,
      hash: hashApiToken(token),
      write: name === "write",
      expiresAt: null,
    });
  }
  return tokens;
}
