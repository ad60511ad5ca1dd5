import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Locator, Page } from "playwright-core";
import { createApp } from "../../lib/app/create-app.ts";
import { parseAllowList } from "../../lib/http/ssrf.ts";
import { createMemoryLogger } from "../../lib/log.ts";
import { openSqliteStore } from "../../lib/store/sqlite/store.ts";
import type { Store } from "../../lib/webhooks/ports.ts";
import { createDeliveryWorker } from "../../lib/worker/bind.ts";
import { launchChromium } from "../fakes/chromium.ts";
import { hasTool } from "../fakes/system-tools.ts";

const available = hasTool("chromium", "browser: Background Tasks");
// Launching Chromium and driving pages takes seconds on a loaded 2-core machine: Bun's default
// of 5 s per test and hook was seen to fail 3 runs of 3 there.
setDefaultTimeout(60_000);
const browserTest = available ? test : test.skip;

/** The webhook's endpoint: answers whatever status the test sets, and counts requests. */
let status = 500;
const received: Array<{ event: string; status: number }> = [];
let endpoint: ReturnType<typeof Bun.serve>;
let appServer: ReturnType<typeof Bun.serve>;
let store: Store;
let browser: Browser;
let dir: string;
const logger = createMemoryLogger();

beforeAll(async () => {
  if (!available) return;
  dir = mkdtempSync(join(tmpdir(), "browser-test-"));
  store = openSqliteStore(join(dir, "app.db"));
  endpoint = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const body = (await request.json()) as { event: string };
      received.push({ event: body.event, status });
      return new Response(status === 200 ? "ok" : "endpoint is down", { status });
    },
  });
  appServer = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: createApp({ store, logger }).fetch,
  });
  browser = await launchChromium();
});

afterAll(async () => {
  if (!available) return;
  await browser?.close();
  await appServer?.stop(true);
  await endpoint?.stop(true);
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** `bun run worker --once` in-process: the allow list lets it reach the local endpoint. */
async function runWorkerOnce() {
  const worker = createDeliveryWorker({
    store,
    logger,
    config: {
      timeoutMs: 5000,
      maxAttempts: 1,
      allowList: parseAllowList(`127.0.0.1:${endpoint.port}`),
      leaseMs: 35_000,
      concurrency: 4,
      retryBaseMs: 1000,
      retryMaxMs: 1000,
    },
  });
  await worker.runOnce();
  return worker.counts;
}

function url(path: string): string {
  return `http://127.0.0.1:${appServer.port}${path}`;
}

/** Clicks a form's button and waits for the page it leads to. */
async function submit(page: Page, within: Page | Locator, button: string, expectedUrl: RegExp) {
  await Promise.all([
    page.waitForURL(expectedUrl),
    within.getByRole("button", { name: button, exact: true }).click(),
  ]);
}

browserTest(
  "a failed delivery shows in Background Tasks, and Retry delivers it once the endpoint is back",
  async () => {
    const item = await store.items.create(
      { sku: "W-1", name: "Widget", quantity: 3, location: "Shelf A" },
      new Date(),
    );
    const page = await browser.newPage();

    // A webhook to an endpoint that answers 500, created through the Webhooks page.
    await page.goto(url("/admin/webhooks/new"));
    await page.getByLabel("Name", { exact: true }).fill("inventory endpoint");
    await page.getByLabel("Payload URL").fill(`http://127.0.0.1:${endpoint.port}/hooks`);
    await submit(page, page, "Create webhook", /\/admin\/webhooks$/);
    expect(await page.locator("#generated-secret").textContent()).toStartWith("whsec_");

    // Edit the item in the Items page.
    await page.goto(url("/admin/items"));
    await Promise.all([page.waitForURL(/\/admin\/items\/\d+$/), page.getByText("W-1").click()]);
    await page.getByLabel("Quantity", { exact: true }).fill("7");
    await submit(page, page, "Save", /\/admin\/items\?notice=item-updated/);
    expect(await page.getByRole("status").textContent()).toContain("1 webhook delivery queued");
    expect((await store.items.get(item.id))?.quantity).toBe(7);

    expect((await runWorkerOnce()).failed).toBe(1);
    expect(received).toEqual([{ event: "updated", status: 500 }]);

    // The failed delivery is in Background Tasks.
    await page.goto(url("/admin/background-tasks"));
    const failedRow = page.locator("section", { hasText: "Failed" }).locator("tbody tr");
    expect(await failedRow.count()).toBe(1);
    expect(await failedRow.textContent()).toContain("HTTP 500");
    expect(await failedRow.textContent()).toContain("item.updated");
    await page.screenshot({ path: join(dir, "background-tasks-failed.png"), fullPage: true });
    if (process.env.SCREENSHOT_DIR) {
      await page.screenshot({
        path: join(process.env.SCREENSHOT_DIR, "background-tasks.png"),
        fullPage: true,
      });
    }

    // The endpoint recovers; Retry, run the worker once, and it is successful.
    status = 200;
    await submit(page, failedRow, "Retry", /\/admin\/background-tasks\?notice=retried/);
    expect(await page.getByRole("status").textContent()).toContain("is queued again");
    expect((await runWorkerOnce()).successful).toBe(1);
    expect(received.at(-1)).toEqual({ event: "updated", status: 200 });

    await page.reload();
    const successfulRows = page
      .locator("section", { hasText: "Recent successful" })
      .locator("tbody tr");
    expect(await successfulRows.count()).toBe(1);
    expect(await successfulRows.textContent()).toContain("HTTP 200");
    expect(await page.locator("section", { hasText: "Failed" }).textContent()).toContain("None.");

    // The delivery page lists both attempts.
    await Promise.all([
      page.waitForURL(/\/deliveries\/\d+$/),
      successfulRows.getByRole("link", { name: /^#\d+$/ }).click(),
    ]);
    expect(await page.locator("#attempt-1").textContent()).toContain("500");
    expect(await page.locator("#attempt-2").textContent()).toContain("200");
    await page.close();
  },
);
