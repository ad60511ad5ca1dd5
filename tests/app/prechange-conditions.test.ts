import { afterEach, beforeEach, expect, test } from "bun:test";
import { appWorker } from "../fakes/test-worker.ts";
import { type FakeEndpoint, startFakeEndpoint } from "../fakes/webhook-endpoint.ts";
import { testApp, webhookForm } from "./harness.ts";

let t: ReturnType<typeof testApp>;
let endpoint: FakeEndpoint;
beforeEach(() => {
  t = testApp();
  endpoint = startFakeEndpoint();
});
afterEach(async () => {
  await endpoint.stop();
  await t.store.close();
});

function worker() {
  return appWorker(t);
}

test("prechange. conditions through the app and a worker: created, updated and deleted items", async () => {
  const hook = (name: string, conditions: object) =>
    t.store.webhooks.create({
      name,
      url: `${endpoint.url}/${name}`,
      bodyTemplate: '{"event": {{ event | tojson }}, "quantity": {{ data.quantity }}}',
      conditions: conditions as never,
    });
  // "Quantity fell below 5": it was at least 5 before the change and is below 5 after.
  await hook("fell", {
    and: [
      { attr: "prechange.quantity", op: "gte", value: 5 },
      { attr: "quantity", op: "lt", value: 5 },
    ],
  });
  // Has an object after the change: every creation and update, never a deletion.
  await hook("after", { and: [{ attr: "postchange.quantity", op: "gte", value: 0 }] });
  // Had an object before the change whose sku was not X: never a creation, even negated.
  await hook("before", { and: [{ attr: "prechange.sku", value: "X", negate: true }] });

  const api = (method: string, path: string, body?: object) =>
    t.client.json(method, path, body).then((r) => r.status);
  expect(await api("POST", "/api/items", { sku: "A-1", name: "Bolt", quantity: 10 })).toBe(201);
  expect(await api("PATCH", "/api/items/1", { quantity: 3 })).toBe(200); // fell: 10 → 3
  expect(await api("PATCH", "/api/items/1", { quantity: 2 })).toBe(200); // was already low
  expect(await api("PATCH", "/api/items/1", { quantity: 8 })).toBe(200);
  expect(await api("PATCH", "/api/items/1", { quantity: 4 })).toBe(200); // fell: 8 → 4
  expect(await api("DELETE", "/api/items/1")).toBe(204);

  await worker().runOnce();
  const received = (name: string) =>
    endpoint.requests.filter((r) => r.path === `/${name}`).map((r) => JSON.parse(r.body));
  expect(received("fell")).toEqual([
    { event: "updated", quantity: 3 },
    { event: "updated", quantity: 4 },
  ]);
  expect(received("after").map((body) => body.event)).toEqual([
    "created",
    "updated",
    "updated",
    "updated",
    "updated",
  ]);
  expect(received("before").map((body) => body.event)).toEqual([
    "updated",
    "updated",
    "updated",
    "updated",
    "deleted",
  ]);
});

test("the webhook form's preview shows each condition with its prechange. value", async () => {
  await t.client.json("POST", "/api/items", { sku: "A-1", name: "Bolt", quantity: 10 });
  await t.store.webhooks.create({ name: "any", url: "https://chat.example/hook" });
  await t.client.json("PATCH", "/api/items/1", { quantity: 3 });
  const condition = JSON.stringify({
    and: [
      { attr: "prechange.quantity", op: "gte", value: 5 },
      { attr: "quantity", op: "lt", value: 5 },
    ],
  });
  const response = await t.client.submit(
    "/admin/webhooks/preview",
    webhookForm({ name: "low", url: "https://chat.example/low", conditions: condition }),
    { from: "/admin/webhooks/new" },
  );
  const html = await response.text();
  expect(html).toContain("this change matches, a delivery would be queued.");
  const rows = [
    ...html.matchAll(
      /<tr><td><code>(\$[^<]*)<\/code><\/td><td><code>([^<]*)<\/code><\/td><td>(.*?)<\/td><td>.*?<\/td><td>(true|false)<\/td><\/tr>/g,
    ),
  ].map((m) => [m[1], m[2], m[3], m[4]]);
  expect(rows).toEqual([
    ["$.and[0]", "prechange.quantity", "<code>10</code>", "true"],
    ["$.and[1]", "quantity", "<code>3</code>", "true"],
  ]);
});
