import { type Browser, chromium } from "playwright-core";

/**
 * The system's Chromium (/usr/bin/chromium, see system-tools.ts) headless, with nothing of its
 * own going to the network: no first-run page, background fetches, component updates or sync.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}
