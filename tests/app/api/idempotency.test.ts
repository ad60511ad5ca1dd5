import { afterEach, beforeEach, expect, test } from "bun:test";
import { Hono } from "hono";
import { IDEMPOTENCY_PENDING_MS, idempotencyMiddleware } from "../../../lib/app/api/idempotency.ts";
import { generateApiToken, hashApiToken } from "../../../lib/app/auth/api-tokens.ts";
import type { AppEnv } from "../../../lib/app/context.ts";
import { createClient, T0, testApp } from "../harness.ts";

const ADMIN = "idempotency-test-admin-0123";
const DAY = 24 * 3_600_000;
const T0_MS = T0.getTime();
let t: ReturnType<typeof testApp>;

beforeEach(() => {
  t = testApp({ adminToken: ADMIN });
});
afterEach(() => t.store.close());

function post(path: string, body: unknown, key: string | null, token = ADMIN) {
  const headers: Record<string, string> = {
    authorization: `Bearer ${token}`,
    "content-type": "application/json",
  };
  if (key !== null) headers["idempotency-key"] = key;
  return t.app.request(path, { method: "POST", headers, body: JSON.stringify(body) });
}

const BOLT = { sku: "A-1", name: "Bolt", quantity: 3 };

test("the same key and request get the first answer again, marked replayed; nothing is done twice", async () => {
  const first = await post("/api/items", BOLT, "create-bolt-1");
  expect(first.status).toBe(201);
  const firstBody = await first.text();
  const again = await post("/api/items", BOLT, "create-bolt-1");
  expect(again.status).toBe(201);
  expect(await again.text()).toBe(firstBody);
  expect(again.headers.get("idempotent-replayed")).toBe("true");
  expect(again.headers.get("location")).toBe(first.headers.get("location"));
  expect(first.headers.get("idempotent-replayed")).toBeNull();
  // The repeat is a request of its own: its own request id, as every answer has.
  expect(again.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  expect(again.headers.get("x-request-id")).not.toBe(first.headers.get("x-request-id"));
  expect(await t.store.items.list()).toHaveLength(1);
  expect(await t.store.queue.list({})).toEqual([]); // no webhooks: the item's change sent nothing
});

test("a webhook created with a key: its secret in the repeat too, and one webhook", async () => {
  const hook = { name: "erp", url: "https://e.example/hook" };
  const first = await (await post("/api/webhooks", hook, "hook-1")).json();
  const again = await (await post("/api/webhooks", hook, "hook-1")).json();
  expect(again).toEqual(first);
  expect(first.secret).toStartWith("whsec_");
  expect((await t.store.webhooks.list()).map((w) => w.name)).toEqual(["erp"]);
});

test("the same key with another request is 409 and changes nothing; another key runs", async () => {
  expect((await post("/api/items", BOLT, "k-2")).status).toBe(201);
  const other = await post("/api/items", { ...BOLT, sku: "A-2" }, "k-2");
  expect(other.status).toBe(409);
  expect(await other.json()).toEqual({
    error: "Idempotency-Key was already used with another request (method, path or body)",
  });
  const elsewhere = await post("/api/webhooks", { name: "x", url: "https://e.example/" }, "k-2");
  expect(elsewhere.status).toBe(409);
  expect((await post("/api/items", { ...BOLT, sku: "A-2" }, "k-3")).status).toBe(201);
  expect(await t.store.items.list()).toHaveLength(2);
  expect(await t.store.webhooks.list()).toEqual([]);
});

test("an answer refusing the request is kept too: the repeat is refused the same way", async () => {
  const bad = { ...BOLT, quantity: -1 };
  const first = await post("/api/items", bad, "bad-1");
  expect(first.status).toBe(400);
  const again = await post("/api/items", bad, "bad-1");
  expect(again.status).toBe(400);
  expect(await again.text()).toBe(await first.text());
});

test("keys are per credential: another token's same key is its own", async () => {
  const token = generateApiToken();
  await t.store.tokens.create({
    name: "ci",
    hash: hashApiToken(token),
    write: true,
    expiresAt: null,
  });
  expect((await post("/api/items", BOLT, "shared-key")).status).toBe(201);
  const theirs = await post("/api/items", { ...BOLT, sku: "B-1" }, "shared-key", token);
  expect(theirs.status).toBe(201);
  expect(theirs.headers.get("idempotent-replayed")).toBeNull();
});

test("a revoked token's keys are not a new token's of the same name: its answer (a secret) is not replayed to it", async () => {
  const first = generateApiToken();
  await t.store.tokens.create({
    name: "ci",
    hash: hashApiToken(first),
    write: true,
    expiresAt: null,
  });
  const hook = { name: "erp", url: "https://e.example/hook" };
  const created = await post("/api/webhooks", hook, "hook-ci", first);
  expect(created.status).toBe(201);
  const { secret } = await created.json();
  expect(secret).toStartWith("whsec_");
  await t.store.tokens.revoke("ci");
  const second = generateApiToken();
  await t.store.tokens.create({
    name: "ci",
    hash: hashApiToken(second),
    write: true,
    expiresAt: null,
  });
  const repeat = await post("/api/webhooks", hook, "hook-ci", second);
  expect(repeat.headers.get("idempotent-replayed")).toBeNull();
  expect(repeat.status).toBe(409); // it ran: the name is taken
  expect(await repeat.text()).not.toContain(secret);
});

test("after 24 hours a key is free again", async () => {
  expect((await post("/api/items", BOLT, "daily")).status).toBe(201);
  t.clock.now = new Date(t.clock.now.getTime() + DAY + 1);
  const later = await post("/api/items", { ...BOLT, sku: "A-9" }, "daily");
  expect(later.status).toBe(201);
  expect(later.headers.get("idempotent-replayed")).toBeNull();
});

test("a request with a key while the first with it still runs: 409, try again; one item", async () => {
  const [a, b] = await Promise.all([
    post("/api/items", BOLT, "racing"),
    post("/api/items", BOLT, "racing"),
  ]);
  const statuses = [a.status, b.status].sort();
  // Either the second came after the first's answer (a replay) or while it ran (409).
  expect([
    [201, 201],
    [201, 409],
  ]).toContainEqual(statuses);
  expect(await t.store.items.list()).toHaveLength(1);
});

test("a malformed key is refused before anything runs", async () => {
  for (const key of ["has space", "x".repeat(256), "tab\tinside"]) {
    const answer = await post("/api/items", BOLT, key);
    expect({ key, status: answer.status }).toEqual({ key, status: 400 });
  }
  expect(await t.store.items.list()).toEqual([]);
});

test("without a key nothing changes: two POSTs make two items", async () => {
  const api = createClient(t.app, { headers: { authorization: `Bearer ${ADMIN}` } });
  expect((await api.json("POST", "/api/items", BOLT)).status).toBe(201);
  expect((await api.json("POST", "/api/items", { ...BOLT, sku: "A-2" })).status).toBe(201);
  expect(await t.store.items.list()).toHaveLength(2);
});

test("the OpenAPI document names Idempotency-Key on every POST, and on nothing else", async () => {
  const doc = (await (await t.app.request("/api/openapi.json")).json()) as {
    paths: Record<string, Record<string, { parameters?: Array<{ name: string; in: string }> }>>;
  };
  const keyed = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods)
      .filter(([, operation]) => operation.parameters?.some((p) => p.name === "Idempotency-Key"))
      .map(([method]) => `${method} ${path}`),
  );
  const posts = Object.entries(doc.paths).flatMap(([path, methods]) =>
    "post" in methods ? [`post ${path}`] : [],
  );
  expect(posts).toContain("post /api/items");
  expect(keyed.sort()).toEqual(posts.sort());
});

test("a key whose request was cut off (the process stopped mid-request) is free again after IDEMPOTENCY_PENDING_MS, not 24 hours", async () => {
  // A handler that never answers stands for a request cut off by a stop or a crash: its key
  // is taken, and neither an answer nor an abandon ever comes.
  const runs: string[] = [];
  const cutStarted = Promise.withResolvers<void>();
  let clock = T0_MS;
  const app = new Hono<AppEnv>();
  app.use(async (c, next) => {
    c.set("via", "bearer");
    c.set("username", "admin");
    c.set("credential", "bearer:admin");
    await next();
  });
  app.use(
    idempotencyMiddleware({ keys: t.store.idempotency, now: () => clock, maxBodyBytes: 1024 }),
  );
  app.post("/api/run", async (c) => {
    runs.push(c.req.header("x-run") ?? "");
    if (c.req.header("x-run") === "cut") {
      cutStarted.resolve();
      return new Promise<Response>(() => {});
    }
    return c.json({ ran: true }, 201);
  });
  const send = (run: string) =>
    app.request("/api/run", {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": "cut-1", "x-run": run },
      body: "{}",
    });
  void send("cut");
  await cutStarted.promise;
  const soon = await send("repeat");
  expect(soon.status).toBe(409);
  clock += IDEMPOTENCY_PENDING_MS + 1;
  const later = await send("repeat");
  expect(later.status).toBe(201);
  expect(runs).toEqual(["cut", "repeat"]);
  // The answer kept by the repeat lives its 24 hours from then, as any other.
  clock += DAY - 1000;
  const replayed = await send("repeat");
  expect(replayed.headers.get("idempotent-replayed")).toBe("true");
  expect(runs).toEqual(["cut", "repeat"]);
});

test("a streamed (chunked) body over the limit with a key is answered 413 and keeps no key", async () => {
  using server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: t.app.fetch });
  const chunk = new Uint8Array(16 * 1024).fill(0x20);
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      // 1 MiB without a Content-Length, over the 64 KiB limit.
      for (let i = 0; i < 64; i++) controller.enqueue(chunk);
      controller.close();
    },
  });
  const answer = await fetch(`${server.url}api/items`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${ADMIN}`,
      "content-type": "application/json",
      "idempotency-key": "streamed-1",
    },
    body,
    duplex: "half",
  } as RequestInit);
  expect(answer.status).toBe(413);
  expect((await post("/api/items", BOLT, "streamed-1")).status).toBe(201);
});
