import { expect, test } from "bun:test";
import { claimDue } from "../../fakes/delivery.ts";
import { T0, useApp } from "../harness.ts";

const SCRIPT = "<script>alert(1)</script>";
const ONERROR = '"><img src=x onerror=alert(2)>';

const t = useApp();

/** No markup from the data survives as markup: only its escaped text. */
function expectEscaped(html: string) {
  expect(html).not.toContain("<script>");
  expect(html).not.toContain("<img");
  expect(html).not.toMatch(/<[^>]*\sonerror=/);
  expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
  expect(html).toContain("&lt;img src=x onerror=alert(2)&gt;");
}

test("a payload, response headers and body holding <script> and onerror= render as text", async () => {
  const webhook = await t.store.webhooks.create({
    name: `hook ${SCRIPT}`,
    url: "http://h.example/",
    events: ["*"],
  });
  const [id] = await t.store.queue.enqueue({
    event: "item.created",
    model: "item",
    username: "alice",
    requestId: "r1",
    data: { name: SCRIPT, location: ONERROR },
    prechange: null,
    postchange: { name: SCRIPT },
    timestamp: T0,
  });
  const claim = await claimDue(t.store, { now: T0.getTime() });
  await t.store.queue.finish(
    claim,
    {
      startedAt: T0.getTime(),
      durationMs: 3,
      statusCode: 500,
      outcome: "http_error",
      error: `HTTP 500 ${ONERROR}`,
      responseHeaders: `x-evil: ${SCRIPT}`,
      responseBody: `${SCRIPT}${ONERROR}`,
    },
    { state: "failed" },
  );

  const delivery = await t.client.open(`/admin/background-tasks/deliveries/${id}`);
  expectEscaped(delivery.html);
  const overview = await t.client.open("/admin/background-tasks");
  expectEscaped(overview.html);
  const webhooks = await t.client.open("/admin/webhooks");
  expect(webhooks.html).toContain(`hook &lt;script&gt;`);
  expect(webhooks.html).not.toContain("<script>");
  expect(webhook.name).toContain("<script>");
});

test("item fields with markup render as text in the list and the form", async () => {
  await t.store.items.create({ sku: "X-1", name: SCRIPT, quantity: 1, location: ONERROR }, T0);
  expectEscaped((await t.client.open("/admin/items")).html);
  const form = await t.client.open("/admin/items/1");
  expect(form.html).toContain('value="&quot;&gt;&lt;img src=x onerror=alert(2)&gt;"');
  expect(form.html).not.toContain("<img");
});

test("a rejected form shows the typed markup as text", async () => {
  const response = await t.client.submit("/admin/webhooks", {
    name: SCRIPT,
    url: ONERROR,
    method: "POST",
    contentType: "application/json",
    headers: "",
    events: ["*"],
  });
  expect(response.status).toBe(400);
  const html = await response.text();
  expect(html).not.toContain("<script>");
  expect(html).not.toContain("<img");
});

test("pages forbid scripts through Content-Security-Policy", async () => {
  const response = await t.client.request("/admin/background-tasks");
  const csp = response.headers.get("content-security-policy") ?? "";
  expect(csp).toContain("default-src 'none'");
  expect(csp).not.toContain("script-src");
  expect(response.headers.get("x-frame-options")).toBe("SAMEORIGIN");
});

test("notice links can not put text on a page", async () => {
  const { html } = await t.client.open(
    `/admin/items?notice=${encodeURIComponent(SCRIPT)}&n=${encodeURIComponent(SCRIPT)}`,
  );
  expect(html).not.toContain("alert(1)");
  const proto = await t.client.open("/admin/items?notice=constructor");
  expect(proto.response.status).toBe(200);
  expect(proto.html).not.toContain('class="notice"');
});
