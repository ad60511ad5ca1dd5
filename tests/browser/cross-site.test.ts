import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { createApp } from "../../lib/app/create-app.ts";
import { createMemoryLogger } from "../../lib/log.ts";
import { openSqliteStore } from "../../lib/store/sqlite/store.ts";
import type { Store } from "../../lib/webhooks/ports.ts";
import { change } from "../fakes/change.ts";
import { launchChromium } from "../fakes/chromium.ts";
import { hasTool } from "../fakes/system-tools.ts";
import { record } from "../store/contract.ts";

/**
 * A page on another origin (another port of 127.0.0.1, which is the same *site*, so the admin's
 * SameSite=Strict cookie rides along; and 127.0.0.2) tries every write route of the API with
 * fetch and with forms, against an app with ADMIN_TOKEN and the admin logged in, and against an
 * open one: nothing in the database changes. The same request from the app's own page does.
 */

const available = hasTool("chromium", "browser: cross-site writes");
setDefaultTimeout(120_000);
const browserTest = available ? test : test.skip;
const ADMIN = "cross-site-browser-admin-token";

/** Bodies that would change something were the request let through; `{}` for any other route. */
const BODIES: Record<string, unknown> = {
  "POST /api/items": { sku: "EVIL-1", name: "Planted", quantity: 1 },
  "PATCH /api/items/1": { quantity: 999 },
  "POST /api/webhooks": { name: "planted", url: "https://attacker.example/" },
  "PATCH /api/webhooks/1": { enabled: false, url: "https://attacker.example/" },
  "POST /api/deliveries/retry": { ids: [1] },
  "POST /api/deliveries/replay": { webhook: 1 },
};

interface Target {
  store: Store;
  server: ReturnType<typeof Bun.serve>;
  /** Requests the app received, so a test knows the attack reached it. */
  received: string[];
  routes: Array<{ method: string; path: string; body: string }>;
}

let dir: string;
let browser: Browser;
const targets: Target[] = [];
let attackers: Array<ReturnType<typeof Bun.serve>> = [];

async function target(adminToken: string | null): Promise<Target> {
  const store = openSqliteStore(join(dir, `${adminToken ? "protected" : "open"}.db`));
  const webhook = await store.webhooks.create({ name: "erp", url: "https://erp.example/in" });
  await store.items.create(
    { sku: "A-1", name: "Bolt", quantity: 1, location: "Shelf A" },
    new Date(),
  );
  await store.queue.enqueue(change());
  const [claim] = await store.queue.claim({
    workerId: "w",
    limit: 1,
    leaseMs: 1000,
    now: Date.now(),
  });
  if (claim) {
    const failed = record({ statusCode: 500, outcome: "http_error", error: "HTTP 500" });
    await store.queue.finish(claim, failed, { state: "failed" });
  }
  expect(webhook.id).toBe(1);
  const app = createApp({ store, config: { adminToken }, logger: createMemoryLogger() });
  const received: string[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(request, bunServer) {
      received.push(`${request.method} ${new URL(request.url).pathname}`);
      return app.fetch(request, bunServer);
    },
  });
  const routes = app.routes
    .filter((r) => r.method !== "ALL" && r.method !== "GET" && r.path.startsWith("/api/"))
    .map((r) => {
      const path = r.path.replaceAll(/:\w+/g, "1");
      return { method: r.method, path, body: JSON.stringify(BODIES[`${r.method} ${path}`] ?? {}) };
    });
  const t = { store, server, received, routes };
  targets.push(t);
  return t;
}

/** Everything a write could change, as one comparable value. */
async function snapshot(store: Store) {
  return {
    items: await store.items.list(),
    webhooks: await store.webhooks.list(),
    deliveries: (await store.queue.list()).map((d) => [d.id, d.state, d.attempts, d.updatedAt]),
    stats: await store.queue.stats(),
  };
}

/** A page of nothing, served at `hostname`: the other origin the attack runs from. */
function attackerOn(hostname: string) {
  const server = Bun.serve({
    port: 0,
    hostname,
    fetch: () =>
      new Response("<!doctype html><title>elsewhere</title><p>nothing to see</p>", {
        headers: { "content-type": "text/html" },
      }),
  });
  attackers.push(server);
  return `http://${hostname}:${server.port}/`;
}

/**
 * From `page` (another origin): every route by fetch (a simple no-cors request with a text/plain
 * body, one with no body at all, and a CORS one declaring JSON) and by two forms (text/plain
 * shaped as JSON, urlencoded), each form into an iframe of its own, waited for.
 */
async function attack(page: Page, base: string, routes: Target["routes"]) {
  return page.evaluate(
    async ({ base, routes }) => {
      const tries: Array<Promise<unknown>> = [];
      for (const { method, path, body } of routes) {
        const url = `${base}${path}`;
        const common = { method, credentials: "include" } as const;
        tries.push(
          fetch(url, {
            ...common,
            mode: "no-cors",
            headers: { "content-type": "text/plain" },
            body,
          }),
          fetch(url, { ...common, mode: "no-cors" }),
          fetch(url, {
            ...common,
            mode: "cors",
            headers: { "content-type": "application/json" },
            body,
          }),
        );
        for (const enctype of ["text/plain", "application/x-www-form-urlencoded"]) {
          const frame = document.createElement("iframe");
          frame.name = `f${Math.random()}`;
          document.body.append(frame);
          const form = document.createElement("form");
          form.method = "post";
          form.action = url;
          form.enctype = enctype;
          form.target = frame.name;
          const field = document.createElement("input");
          // text/plain sends `name=value`: `{"x":"` + `=` + `"}` reads as JSON.
          field.name = body === "{}" ? '{"x":"' : `${body.slice(0, -1)},"x":"`;
          field.value = '"}';
          form.append(field);
          document.body.append(form);
          tries.push(
            new Promise((resolve) => frame.addEventListener("load", resolve, { once: true })),
          );
          form.submit();
        }
      }
      const settled = await Promise.allSettled(tries);
      return settled.length;
    },
    { base, routes },
  );
}

beforeAll(async () => {
  if (!available) return;
  dir = mkdtempSync(join(tmpdir(), "cross-site-"));
  browser = await launchChromium();
});

afterAll(async () => {
  if (!available) return;
  await browser?.close();
  for (const server of attackers) await server.stop(true);
  attackers = [];
  for (const t of targets) {
    await t.server.stop(true);
    await t.store.close();
  }
  rmSync(dir, { recursive: true, force: true });
});

describe("a page on another origin changes nothing through the API", () => {
  browserTest("with ADMIN_TOKEN and the admin logged in in the same browser", async () => {
    const t = await target(ADMIN);
    const base = `http://127.0.0.1:${t.server.port}`;
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${base}/admin/login`);
    await page.getByLabel("Admin token").fill(ADMIN);
    await Promise.all([
      page.waitForURL((url) => !url.pathname.endsWith("/login")),
      page.getByRole("button", { name: "Log in" }).click(),
    ]);
    const before = await snapshot(t.store);

    for (const elsewhere of [attackerOn("127.0.0.1"), attackerOn("127.0.0.2")]) {
      await page.goto(elsewhere);
      const sent = t.received.length;
      expect(await attack(page, base, t.routes)).toBe(t.routes.length * 5);
      // The attack reached the app (the preflighted CORS fetch never leaves the browser).
      expect(t.received.length - sent).toBeGreaterThanOrEqual(t.routes.length * 2);
    }
    expect(await snapshot(t.store)).toEqual(before);

    // The control: the same browser's cookie with the app's own Origin may write (its pages
    // run no script: their CSP has no connect-src, so the request is made beside them).
    const own = await context.request.post(`${base}/api/items`, {
      headers: { "content-type": "application/json", origin: base },
      data: BODIES["POST /api/items"],
    });
    expect(own.status()).toBe(201);
    await context.close();
  });

  browserTest("without ADMIN_TOKEN (open on loopback), no cookie needed", async () => {
    const t = await target(null);
    const base = `http://127.0.0.1:${t.server.port}`;
    const context = await browser.newContext();
    const page = await context.newPage();
    const before = await snapshot(t.store);
    for (const elsewhere of [attackerOn("127.0.0.2"), attackerOn("127.0.0.1")]) {
      await page.goto(elsewhere);
      expect(await attack(page, base, t.routes)).toBe(t.routes.length * 5);
    }
    expect(await snapshot(t.store)).toEqual(before);
    const own = await context.request.post(`${base}/api/webhooks/1/rotate-secret`, {
      headers: { "content-type": "application/json", origin: base },
      data: {},
    });
    expect(own.status()).toBe(200);
    await context.close();
  });
});
