import { afterEach, describe, expect, test } from "bun:test";
import { testApp, webhookForm } from "../harness.ts";

let t: ReturnType<typeof testApp>;
afterEach(() => t.store.close());

const form = webhookForm();
const LOOPBACK_WARNING =
  "Workers will refuse 127.0.0.1 (loopback) unless their WEBHOOK_ALLOWED_HOSTS allows it, e.g. WEBHOOK_ALLOWED_HOSTS=127.0.0.1:9000";

function create(fields: Record<string, string | string[]> = form) {
  return t.client.submit("/admin/webhooks", fields, { from: "/admin/webhooks/new" });
}

/** The warnings a page shows beside a URL, as text. */
function warnings(html: string): string[] {
  return [
    ...html.matchAll(
      /<p class="url-warning" role="status"><strong>Warning:<\/strong> ([^<]*)<\/p>/g,
    ),
  ].map((m) => m[1] ?? "");
}

describe("the webhook form warns about a URL the SSRF guard will refuse", () => {
  test("after creating, and on its form, a loopback URL is named with the WEBHOOK_ALLOWED_HOSTS entry that allows it", async () => {
    t = testApp();
    const created = await create();
    expect(created.status).toBe(200);
    expect(warnings(await created.text())).toEqual([LOOPBACK_WARNING]);
    const [webhook] = await t.store.webhooks.list();
    expect(warnings((await t.client.open(`/admin/webhooks/${webhook?.id}`)).html)).toEqual([
      LOOPBACK_WARNING,
    ]);
  });

  test("no warning for a global address, nor for one WEBHOOK_ALLOWED_HOSTS allows", async () => {
    t = testApp();
    expect(
      warnings(await (await create({ ...form, url: "https://hooks.example/in" })).text()),
    ).toEqual([]);
    t.store.close();
    t = testApp({ webhookAllowList: "127.0.0.1:9000" });
    expect(warnings(await (await create()).text())).toEqual([]);
  });

  test("a name that resolves to a private address is named with the address", async () => {
    t = testApp({ resolve: async () => ["10.1.2.3"] });
    const html = await (await create({ ...form, url: "http://inventory.internal:8080/" })).text();
    expect(warnings(html)).toEqual([
      "Workers will refuse inventory.internal, which resolves to 10.1.2.3 (private) unless their WEBHOOK_ALLOWED_HOSTS allows it, e.g. WEBHOOK_ALLOWED_HOSTS=inventory.internal:8080",
    ]);
  });

  test("the preview checks the URL its template renders, once, under the rendered URL", async () => {
    t = testApp();
    const response = await t.client.submit(
      "/admin/webhooks/preview",
      { ...form, url: "http://127.0.0.1:9000/items/{{ data.id }}" },
      { from: "/admin/webhooks/new" },
    );
    const html = await response.text();
    const preview = html.slice(html.indexOf('<section id="preview">'));
    expect(preview).toContain("<code>http://127.0.0.1:9000/items/1</code>");
    expect(warnings(preview)).toEqual([LOOPBACK_WARNING]);
    expect(warnings(html)).toHaveLength(1);
  });

  test("saving an edit to a refused URL leads back to its form, which says so; a fine URL to the list", async () => {
    t = testApp();
    await create({ ...form, url: "https://hooks.example/in" });
    const [webhook] = await t.store.webhooks.list();
    const refused = await t.client.submit(`/admin/webhooks/${webhook?.id}`, form, {
      from: `/admin/webhooks/${webhook?.id}`,
    });
    expect(refused.headers.get("location")).toBe(
      `/admin/webhooks/${webhook?.id}?notice=webhook-updated`,
    );
    const page = await t.client.open(refused.headers.get("location") ?? "");
    expect(page.html).toContain("Webhook saved.");
    expect(warnings(page.html)).toEqual([LOOPBACK_WARNING]);
    const fine = await t.client.submit(
      `/admin/webhooks/${webhook?.id}`,
      { ...form, url: "https://hooks.example/in" },
      { from: `/admin/webhooks/${webhook?.id}` },
    );
    expect(fine.headers.get("location")).toBe("/admin/webhooks?notice=webhook-updated");
  });
});
