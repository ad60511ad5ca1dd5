import { afterEach, beforeEach, expect, test } from "bun:test";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { createDeliveryWorker } from "../../../lib/worker/bind.ts";
import { loopbackWorkerConfig } from "../../fakes/test-worker.ts";
import { type FakeEndpoint, startFakeEndpoint } from "../../fakes/webhook-endpoint.ts";
import { testApp } from "../harness.ts";

interface Doc {
  paths: Record<
    string,
    Record<
      string,
      { responses: Record<string, { content?: { "application/json": { schema: object } } }> }
    >
  >;
  components: object;
}

let t: ReturnType<typeof testApp>;
let endpoint: FakeEndpoint;
let doc: Doc;

beforeEach(async () => {
  t = testApp();
  endpoint = startFakeEndpoint();
  doc = (await (await t.app.request("/api/openapi.json")).json()) as Doc;
});
afterEach(async () => {
  await endpoint.stop();
  await t.store.close();
});

/**
 * Sends a request and checks its answer against the schema the document gives for that route
 * and status (ajv, the document's components alongside so its $refs resolve).
 */
async function answered(method: string, path: string, route: string, body?: unknown) {
  const response = await t.client.json(method, path, body);
  const json = response.status === 204 ? null : await response.json();
  const described = doc.paths[route]?.[method.toLowerCase()]?.responses[String(response.status)];
  expect({ route, method, status: response.status, described: described !== undefined }).toEqual({
    route,
    method,
    status: response.status,
    described: true,
  });
  const schema = described?.content?.["application/json"].schema;
  if (schema) {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    const validate = ajv.compile({ ...schema, components: doc.components });
    expect({
      route,
      status: response.status,
      errors: validate(json) ? null : validate.errors,
    }).toEqual({ route, status: response.status, errors: null });
  }
  return { status: response.status, json: json as Record<string, unknown> };
}

test("every webhooks and deliveries answer has the shape the document names", async () => {
  const hooks = "/api/webhooks";
  const hook = "/api/webhooks/{id}";
  const made = await answered("POST", hooks, hooks, { name: "erp", url: `${endpoint.url}/h` });
  expect(made.status).toBe(201);
  await answered("POST", hooks, hooks, { name: "erp", url: `${endpoint.url}/h` }); // 409
  await answered("POST", hooks, hooks, { name: "", url: 1 }); // 400
  await answered("GET", hooks, hooks);
  await answered("GET", "/api/webhooks/1", hook);
  await answered("PATCH", "/api/webhooks/1", hook, { timeout_ms: 2000, headers: ["X-A: b"] });
  await answered("PATCH", "/api/webhooks/1", hook, { timeout_ms: 1 }); // 400
  await answered("GET", "/api/webhooks/9", hook); // 404

  await t.client.json("POST", "/api/items", { sku: "A", name: "Bolt", quantity: 1 });
  await createDeliveryWorker({
    store: t.store,
    now: () => t.clock.now.getTime(),
    config: loopbackWorkerConfig(),
  }).runOnce();
  const list = await answered("GET", "/api/deliveries?webhook=1", "/api/deliveries");
  expect(list.json.total).toBe(1);
  await answered("GET", "/api/deliveries?state=lost", "/api/deliveries"); // 400
  await answered("GET", "/api/deliveries/1", "/api/deliveries/{id}");
  await answered("GET", "/api/deliveries/7", "/api/deliveries/{id}"); // 404
  await answered("POST", "/api/deliveries/retry", "/api/deliveries/retry", { ids: [1] });
  await answered("POST", "/api/deliveries/retry", "/api/deliveries/retry", { webhook: 1 });
  await answered("POST", "/api/deliveries/retry", "/api/deliveries/retry", { ids: [] }); // 400
  const replay = await answered("POST", "/api/deliveries/replay", "/api/deliveries/replay", {
    webhook: 1,
  });
  expect(replay.json.replayed).toBe(1);
  await answered("POST", "/api/deliveries/replay", "/api/deliveries/replay", { since: "x" }); // 400
  const removed = await answered("DELETE", "/api/webhooks/1", hook);
  expect(removed.status).toBe(204);
});
