import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { createApp } from "../../lib/app/create-app.ts";
import { parseAllowList } from "../../lib/http/ssrf.ts";
import { createMemoryLogger } from "../../lib/log.ts";
import { openSqliteStore } from "../../lib/store/sqlite/store.ts";
import type { Store } from "../../lib/webhooks/ports.ts";
import { createDeliveryWorker } from "../../lib/worker/bind.ts";
import { launchChromium } from "../fakes/chromium.ts";
import { hasTool } from "../fakes/system-tools.ts";
import { type FakeEndpoint, startFakeEndpoint } from "../fakes/webhook-endpoint.ts";

const available = hasTool("chromium", "browser: narrow screen");
const browserTest = available ? test : test.skip;
// Launching Chromium and driving pages takes seconds on a loaded 2-core machine: Bun's default
// of 5 s per test and hook was seen to fail 2 runs of 3 there.
setDefaultTimeout(60_000);
const TOKEN = "narrow-screen-admin-token-0123";
const WIDTH = 420;

let store: Store;
let server: ReturnType<typeof Bun.serve>;
let browser: Browser;
let base: string;
let endpoint: FakeEndpoint;

beforeAll(async () => {
  if (!available) return;
  store = openSqliteStore(":memory:");
  // An endpoint that answers 500: its deliveries end failed, each with its Retry button.
  endpoint = startFakeEndpoint(() => new Response("down", { status: 500 }));
  await store.webhooks.create({ name: "receiver", url: `${endpoint.url}/hook` });
  const app = createApp({ store, config: { adminToken: TOKEN }, logger: createMemoryLogger() });
  server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: app.fetch });
  base = `http://127.0.0.1:${server.port}`;
  // Deliveries, so the pages have their widest tables.
  for (const sku of ["N-1", "N-2"]) {
    await fetch(`${base}/api/items`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ sku, name: `Narrow widget ${sku}`, quantity: 1 }),
    });
  }
  await createDeliveryWorker({
    store,
    logger: createMemoryLogger(),
    config: {
      timeoutMs: 5000,
      maxAttempts: 1,
      allowList: parseAllowList(`127.0.0.1:${endpoint.port}`),
      leaseMs: 35_000,
      concurrency: 2,
      retryBaseMs: 1000,
      retryMaxMs: 1000,
    },
  }).runOnce();
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.stop(true);
  await endpoint?.stop();
  await store?.close();
});

browserTest(
  `at ${WIDTH} px the menu and Log out stay on screen and no page scrolls sideways`,
  async () => {
    const page = await browser.newPage({ viewport: { width: WIDTH, height: 800 } });
    await page.goto(`${base}/admin/login`);
    await page.fill("input[name=token]", TOKEN);
    await page.click("button[type=submit]");
    await page.waitForURL(/\/admin\/background-tasks/);
    for (const path of [
      "/admin/background-tasks",
      "/admin/background-tasks/deliveries?state=queued",
      "/admin/background-tasks/deliveries/1",
      "/admin/webhooks",
      "/admin/webhooks/1",
      "/admin/items",
      "/admin/items/1",
    ]) {
      await page.goto(`${base}${path}`);
      const layout = await page.evaluate(() => {
        const right = (selector: string) =>
          [...document.querySelectorAll(selector)].map((e) => e.getBoundingClientRect().right);
        return {
          scrollWidth: document.documentElement.scrollWidth,
          menu: right("header.top nav a, header.top a.brand, header.top .user button"),
        };
      });
      expect(layout.scrollWidth, path).toBeLessThanOrEqual(WIDTH);
      expect(layout.menu, path).toHaveLength(5);
      for (const edge of layout.menu) expect(edge, path).toBeLessThanOrEqual(WIDTH);
    }
    await page.close();
  },
);

/** The right edges of what must stay on screen, by name. */
async function rightEdges(page: Page, selectors: Record<string, string>) {
  return page.evaluate((wanted) => {
    const edges: Record<string, number[]> = {};
    for (const [name, selector] of Object.entries(wanted)) {
      edges[name] = [...document.querySelectorAll(selector)].map(
        (e) => e.getBoundingClientRect().right,
      );
    }
    return { edges, scrollWidth: document.documentElement.scrollWidth };
  }, selectors);
}

for (const width of [390, 1280]) {
  browserTest(
    `at ${width} px every list keeps its key column and its action on screen`,
    async () => {
      const page = await browser.newPage({ viewport: { width, height: 800 } });
      await page.goto(`${base}/admin/login`);
      await page.fill("input[name=token]", TOKEN);
      await page.click("button[type=submit]");
      await page.waitForURL(/\/admin\/background-tasks/);
      for (const [path, selectors] of [
        [
          "/admin/background-tasks/deliveries?state=failed",
          { key: "tr[id^=delivery-] td:first-child a", action: "tr[id^=delivery-] button" },
        ],
        [
          "/admin/webhooks",
          { key: "tr[id^=webhook-] td:first-child a", action: "tr[id^=webhook-] button" },
        ],
        ["/admin/items", { key: "tr[id^=item-] td:first-child a" }],
        ["/admin/background-tasks/deliveries/1", { key: "tr[id^=attempt-] td:first-child" }],
      ] as const) {
        await page.goto(`${base}${path}`);
        const { edges, scrollWidth } = await rightEdges(page, selectors);
        expect(scrollWidth, path).toBeLessThanOrEqual(width);
        for (const [name, rights] of Object.entries(edges)) {
          expect(rights.length, `${path} ${name}`).toBeGreaterThan(0);
          for (const right of rights) expect(right, `${path} ${name}`).toBeLessThanOrEqual(width);
        }
      }
      // On a phone each row is a card whose values say which column they are.
      if (width === 390) {
        await page.goto(`${base}/admin/background-tasks/deliveries?state=failed`);
        const label = await page.evaluate(() => {
          const cell = document.querySelector("tr[id^=delivery-] td[data-label=Event]");
          return cell ? getComputedStyle(cell, "::before").content : null;
        });
        expect(label).toBe('"Event: "');
      }
      await page.close();
    },
  );

  browserTest(`at ${width} px Preview scrolls its result into view`, async () => {
    const page = await browser.newPage({ viewport: { width, height: 700 } });
    await page.goto(`${base}/admin/login`);
    await page.fill("input[name=token]", TOKEN);
    await page.click("button[type=submit]");
    await page.waitForURL(/\/admin\/background-tasks/);
    await page.goto(`${base}/admin/webhooks/1`);
    await Promise.all([
      page.waitForURL(/\/preview(#preview)?$/),
      page.getByRole("button", { name: "Preview with the last change" }).click(),
    ]);
    const heading = page.locator("#preview h2");
    await heading.waitFor();
    // On screen: its box overlaps the viewport (scrolled to, it sits at the very top).
    const box = await heading.boundingBox();
    expect(box).not.toBeNull();
    expect((box?.y ?? -1) + (box?.height ?? 0)).toBeGreaterThan(0);
    expect(box?.y ?? Number.POSITIVE_INFINITY).toBeLessThan(700);
    await page.close();
  });
}

browserTest(
  "at 390 px a delivery's and a webhook's summary values are whole on screen",
  async () => {
    const page = await browser.newPage({ viewport: { width: 390, height: 800 } });
    await page.goto(`${base}/admin/login`);
    await page.fill("input[name=token]", TOKEN);
    await page.click("button[type=submit]");
    await page.waitForURL(/\/admin\/background-tasks/);
    for (const path of ["/admin/background-tasks/deliveries/1", "/admin/webhooks/1"]) {
      await page.goto(`${base}${path}`);
      const summary = await page.evaluate(() =>
        [...document.querySelectorAll("table.fields")].map((table) => ({
          // A table that scrolls inside itself hides the end of its values.
          hidden: table.scrollWidth - table.clientWidth,
          rights: [...table.querySelectorAll("td, th")].map((c) => c.getBoundingClientRect().right),
        })),
      );
      expect(summary.length, path).toBeGreaterThan(0);
      for (const { hidden, rights } of summary) {
        expect(hidden, path).toBeLessThanOrEqual(0);
        for (const right of rights) expect(right, path).toBeLessThanOrEqual(390);
      }
    }
    await page.close();
  },
);
