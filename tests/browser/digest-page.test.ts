import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { archiveIndexHtml } from "../../lib/digest/render/archive-index.ts";
import { htmlRenderer } from "../../lib/digest/render/html.ts";
import { launchChromium } from "../fakes/chromium.ts";
import { PAGE_META, sampleDigests } from "../fakes/digest-page.ts";
import { hasTool } from "../fakes/system-tools.ts";

const available = hasTool("chromium", "browser: digest page");
// Launching Chromium takes seconds on a loaded 2-core machine.
setDefaultTimeout(60_000);
const browserTest = available ? test : test.skip;

let browser: Browser;
let dir: string;

beforeAll(async () => {
  if (!available) return;
  dir = mkdtempSync(join(tmpdir(), "digest-page-"));
  const renderer = htmlRenderer({ timeZone: "UTC", archive: true });
  renderer.begin(PAGE_META);
  for (const [index, digest] of sampleDigests().entries()) renderer.story(digest, index);
  writeFileSync(join(dir, "2026-11-25.html"), renderer.end());
  const headlines = sampleDigests()
    .slice(0, 5)
    .map(({ story }) => ({ id: story.id, title: story.title }));
  const days = new Map([
    ["2026-11-24", { stories: 0, headlines: [] }],
    ["2026-11-25", { stories: sampleDigests().length, headlines }],
  ]);
  writeFileSync(join(dir, "index.html"), archiveIndexHtml(days));
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** WCAG contrast ratio of two `rgb(r, g, b)` colours. */
function contrast(a: string, b: string): number {
  const luminance = (color: string) => {
    const [r = 0, g = 0, bl = 0] = (color.match(/\d+(\.\d+)?/g) ?? []).map(Number);
    const linear = (c: number) => {
      const s = c / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    };
    return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(bl);
  };
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return ((light ?? 0) + 0.05) / ((dark ?? 0) + 0.05);
}

async function open(width: number, scheme: "light" | "dark", file: string) {
  const page = await browser.newPage({ viewport: { width, height: 800 } });
  await page.emulateMedia({ colorScheme: scheme });
  const requests: string[] = [];
  page.on("request", (request) => requests.push(request.url()));
  await page.goto(`file://${join(dir, file)}`);
  return { page, requests };
}

/** Text colours of the page's kinds of text against the page's own background. */
function colours(page: Page) {
  return page.evaluate(() => {
    const color = (selector: string) => {
      const element = document.querySelector(selector);
      return element ? getComputedStyle(element).color : "";
    };
    return {
      page: getComputedStyle(document.documentElement).backgroundColor,
      panel: getComputedStyle(document.querySelector(".toc") as Element).backgroundColor,
      text: color("article p:not(.facts)"),
      muted: color("article .facts"),
      accent: color("article h4"),
      tocFacts: color(".toc .facts"),
    };
  });
}

describe("the digest page in Chromium", () => {
  for (const width of [1280, 390]) {
    for (const scheme of ["light", "dark"] as const) {
      browserTest(
        `at ${width} px, ${scheme}: loads nothing, never scrolls sideways, text is readable`,
        async () => {
          const { page, requests } = await open(width, scheme, "2026-11-25.html");
          expect(requests).toEqual([`file://${join(dir, "2026-11-25.html")}`]);
          const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
          expect(scrollWidth).toBeLessThanOrEqual(width);
          const c = await colours(page);
          // Light and dark really differ: the page follows the reader's system.
          expect(
            contrast(c.page, scheme === "dark" ? "rgb(0, 0, 0)" : "rgb(255, 255, 255)"),
          ).toBeLessThan(1.2);
          expect(contrast(c.text, c.page)).toBeGreaterThanOrEqual(7);
          expect(contrast(c.muted, c.page)).toBeGreaterThanOrEqual(4.5);
          expect(contrast(c.accent, c.page)).toBeGreaterThanOrEqual(4.5);
          expect(contrast(c.tocFacts, c.panel)).toBeGreaterThanOrEqual(4.5);
          await page.close();
        },
      );
    }
  }

  browserTest("at 390 px a contents entry takes the reader to its story, and back", async () => {
    const { page } = await open(390, "light", "2026-11-25.html");
    const entries = await page.locator(".toc li a").allTextContents();
    expect(entries).toHaveLength(10);
    // New stories first: the four new ones, then the rest in front-page order.
    expect(entries[0]).toBe(
      "The unreasonable effectiveness of plain text files for personal knowledge management",
    );
    await page.locator(".toc a", { hasText: "Kernel 7.2 released" }).click();
    const top = await page.evaluate(
      () => document.querySelector("#story-46000005")?.getBoundingClientRect().top ?? -1,
    );
    expect(top).toBeGreaterThan(-1);
    expect(top).toBeLessThan(100);
    await page.locator("#story-46000005 a", { hasText: "Contents" }).click();
    const toc = await page.evaluate(
      () => document.querySelector("#contents")?.getBoundingClientRect().top ?? -1,
    );
    expect(toc).toBeGreaterThan(-1);
    expect(toc).toBeLessThan(100);
    await page.close();
  });

  browserTest("the archive index links every day, newest first, and loads nothing", async () => {
    const { page, requests } = await open(390, "dark", "index.html");
    expect(requests).toHaveLength(1);
    const days = await page.locator(".days > li > a").allTextContents();
    expect(days).toEqual(["Wednesday 25 November 2026", "Tuesday 24 November 2026"]);
    await page.locator(".days > li > a", { hasText: "Wednesday" }).click();
    await page.waitForURL(/2026-11-25\.html$/);
    expect(await page.title()).toBe("Hacker News digest · Wednesday 25 November 2026, 14:53 UTC");
    await page.close();
  });

  browserTest("the index's headlines lead to their story on the day's page", async () => {
    const { page } = await open(390, "light", "index.html");
    const [first] = sampleDigests();
    const headlines = page.locator(".headlines a");
    expect(await headlines.count()).toBe(5);
    await headlines.first().click();
    await page.waitForURL(new RegExp(`2026-11-25\\.html#story-${first?.story.id}$`));
    const top = await page.evaluate(
      (id) => document.getElementById(`story-${id}`)?.getBoundingClientRect().top ?? -1,
      String(first?.story.id),
    );
    expect(top).toBeGreaterThan(-1);
    expect(top).toBeLessThan(100);
    await page.close();
  });
});
