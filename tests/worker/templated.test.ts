import { afterEach, expect, test } from "bun:test";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { createDeliveryWorker } from "../../lib/worker/bind.ts";
import { change } from "../fakes/change.ts";
import { databaseFileAndEndpoint } from "../fakes/database-file.ts";
import { loopbackWorkerConfig } from "../fakes/test-worker.ts";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

test("a worker sends what the templates rendered at enqueue, and a retry resends the same bytes", async () => {
  // Real time: receivers refuse a webhook-timestamp more than 5 minutes off.
  const clock = { t: Date.now() };
  // The first attempt gets a 500, the second a 200.
  const { store, endpoint } = databaseFileAndEndpoint(
    (_request, index) => new Response("", { status: index === 0 ? 500 : 200 }),
    { cleanups, prefix: "templated-", now: () => clock.t },
  );
  const hook = await store.webhooks.create({
    name: "chat",
    url: `${endpoint.url}/{{ model }}/{{ data.sku }}`,
    headers: [["X-Quantity", "{{ data.quantity }}"]],
    bodyTemplate: '{"text": {{ (data.name ~ " x" ~ data.quantity) | tojson }}}',
    conditions: { and: [{ attr: "quantity", op: "gte", value: 1 }] },
    secret: SECRET,
  });
  await store.queue.enqueue(change({ data: { sku: "A-1", name: "Bolt", quantity: 0 } }));
  await store.queue.enqueue(change({ data: { sku: "A-1", name: 'Bolt "M6"', quantity: 3 } }));
  const worker = createDeliveryWorker({
    store,
    now: () => clock.t,
    random: () => 0.5,
    config: loopbackWorkerConfig({ maxAttempts: 3 }),
  });
  await worker.runOnce();
  // The template changes before the retry: the queued delivery keeps what was rendered.
  await store.webhooks.update(hook.id, { bodyTemplate: '{"text": "changed"}' });
  clock.t += 60_000;
  await worker.runOnce();

  expect(endpoint.requests).toHaveLength(2);
  const [first, second] = endpoint.requests;
  for (const received of [first, second]) {
    expect(received?.path).toBe("/item/A-1");
    expect(received?.headers["x-quantity"]).toBe("3");
    expect(received?.body).toBe('{"text": "Bolt \\"M6\\" x3"}');
    expect(
      new StandardWebhook(SECRET).verify(received?.body ?? "", received?.headers ?? {}),
    ).toEqual({ text: 'Bolt "M6" x3' });
  }
  expect(second?.headers["webhook-id"]).toBe(first?.headers["webhook-id"]);
  expect(await store.queue.stats()).toMatchObject({ successful: 1, queued: 0, failed: 0 });
});
