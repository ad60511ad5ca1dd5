import { expect, test } from "bun:test";
import { Validator } from "@seriousme/openapi-schema-validator";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { EVENT_CATALOGUE } from "../../../lib/webhooks/events/catalogue.ts";
import { ITEM_EVENTS } from "../../../lib/webhooks/model.ts";
import { useDocumentedApp } from "../harness.ts";

interface EventOperation {
  summary: string;
  requestBody: { content: { "application/json": { schema: object } } };
}
type Doc = { openapi: string; webhooks: Record<string, { post: EventOperation }> };

const app = useDocumentedApp<Doc>();

function validatorFor(event: string) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const schema = app.doc.webhooks[event]?.post.requestBody.content["application/json"].schema;
  if (!schema) throw new Error(`${event} is not in the document's webhooks`);
  return ajv.compile(schema);
}

/** Real bodies: each item change made through the API, as queued for a webhook of every event. */
async function queuedBodies(): Promise<Array<{ event: string; body: unknown }>> {
  await app.t.store.webhooks.create({
    name: "all",
    url: "https://example.com/hook",
    events: ["*"],
  });
  const json = (method: string, path: string, body?: unknown) =>
    app.t.client.json(method, path, body).then((r) => expect(r.status).toBeLessThan(300));
  await json("POST", "/api/items", { sku: "W-1", name: "Widget", quantity: 3, location: "A" });
  await json("POST", "/api/items", { sku: "W-2", name: "Gadget", quantity: 0 });
  await json("PATCH", "/api/items/1", { quantity: 4, location: "" });
  await json("DELETE", "/api/items/2");
  const deliveries = await app.t.store.queue.list({ limit: 100 });
  return deliveries.map((d) => ({ event: d.event, body: JSON.parse(d.payload) }));
}

test("the document's webhooks are the catalogue: item.created, item.updated, item.deleted", () => {
  expect(Object.keys(app.doc.webhooks).sort()).toEqual(Object.keys(EVENT_CATALOGUE).sort());
  for (const event of ITEM_EVENTS) expect(app.doc.webhooks[event]?.post.summary).toBe(event);
});

test("every body sent for an item change validates against its event's schema (ajv)", async () => {
  const bodies = await queuedBodies();
  expect(bodies.map((b) => b.event).sort()).toEqual([
    "item.created",
    "item.created",
    "item.deleted",
    "item.updated",
  ]);
  for (const { event, body } of bodies) {
    const validate = validatorFor(event);
    expect({ event, valid: validate(body), errors: validate.errors ?? null }).toEqual({
      event,
      valid: true,
      errors: null,
    });
  }
});

test("the schemas refuse a body that drifted: a field added, one missing, the wrong event", async () => {
  const [created] = (await queuedBodies()).filter((b) => b.event === "item.created");
  const body = created?.body as Record<string, unknown>;
  const validate = validatorFor("item.created");
  expect(validate(body)).toBe(true);
  expect(validate({ ...body, extra: 1 })).toBe(false);
  const { request_id: _, ...missing } = body;
  expect(validate(missing)).toBe(false);
  expect(validate({ ...body, event: "updated" })).toBe(false);
  expect(validatorFor("item.updated")(body)).toBe(false);
});

test("the document with its webhooks is valid OpenAPI 3.1", async () => {
  type Spec = Parameters<Validator["validate"]>[0];
  const result = await new Validator().validate(structuredClone(app.doc) as unknown as Spec);
  expect(result.errors ?? []).toEqual([]);
  expect(app.doc.openapi).toStartWith("3.1");
});
