import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { type Browser, chromium } from "playwright-core";
import { createApp } from "../../lib/app/create-app.ts";
import { createMemoryLogger } from "../../lib/log.ts";
import { openSqliteStore } from "../../lib/store/sqlite/store.ts";
import type { Store } from "../../lib/webhooks/ports.ts";
import { hasTool } from "../fakes/system-tools.ts";

const CHROMIUM = "/usr/bin/chromium";
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

beforeAll(async () => {
  if (!available) return;
  store = openSqliteStore(":memory:");
  await store.webhooks.create({ name: "receiver", url: "http://127.0.0.1:9000/hook" });
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
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
  });
});

afterAll(async () => {
  await browser?.close();
  await server?.stop(true);
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
