import { afterEach, beforeEach, expect, setDefaultTimeout, test } from "bun:test";
import { sharedTemplateRenderer } from "../../lib/webhooks/rendering/render-process.ts";
import { LOOP_BOMB, STRING_BOMB } from "../fakes/template-bombs.ts";
import { testApp } from "./harness.ts";

// Before: 22–33 s for the change, and every other request waited as long.
setDefaultTimeout(60_000);

let t: ReturnType<typeof testApp>;
beforeEach(async () => {
  t = testApp();
  // The app starts its renderer at start; so do these tests, outside the measured part.
  await sharedTemplateRenderer().render(
    { url: "http://x/", headers: [], bodyTemplate: "{{ 1 }}" },
    "{}",
  );
});
afterEach(() => t.store.close());

test.each([
  ["a loop multiplying strings", LOOP_BOMB, "ms of CPU for this change (each webhook's own budget"],
  ["one huge string", STRING_BOMB, "out of memory (at most 64 MiB)"],
])(
  "POST /api/items with %s in a webhook's template: other requests answered meanwhile, the change soon, its delivery a template_error",
  async (_name, bomb, reason) => {
    // Written straight to the store, as a row from before the check at save.
    const bombed = await t.store.webhooks.create({
      name: "bomb",
      url: "http://x/",
      bodyTemplate: bomb,
    });
    const started = performance.now();
    const change = t.client.json("POST", "/api/items", { sku: "B-1", name: "Bolt", quantity: 1 });
    const others: number[] = [];
    for (let i = 0; i < 3; i++) {
      const asked = performance.now();
      expect((await t.client.request("/api/items")).status).toBe(200);
      others.push(performance.now() - asked);
    }
    expect((await change).status).toBe(201);
    const changeMs = performance.now() - started;
    // Bounds far below the damage, generous for a loaded 2-core machine (targets 250 ms and 2 s).
    expect(Math.max(...others)).toBeLessThan(2000);
    expect(changeMs).toBeLessThan(5000);
    const [delivery] = await t.store.queue.list({ webhookId: bombed.id });
    // Starved of CPU (a loaded machine), the render meets its wall-clock ceiling first and is
    // left to the worker, which stops it at the same CPU budget: no failure at enqueue then.
    if (delivery?.renderPending) return;
    expect(delivery).toMatchObject({ state: "failed", templateFailed: true });
    expect(delivery?.lastError).toContain(reason);
  },
);
