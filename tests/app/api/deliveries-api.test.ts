import { afterEach, beforeEach, describe, expect, setSystemTime, test } from "bun:test";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { appWorker } from "../../fakes/test-worker.ts";
import { type FakeEndpoint, startFakeEndpoint } from "../../fakes/webhook-endpoint.ts";
import { T0, testApp } from "../harness.ts";

let t: ReturnType<typeof testApp>;
let endpoint: FakeEndpoint;
/** What the endpoint answers: 200 unless a test says otherwise. */
let status = 200;

beforeEach(() => {
  t = testApp();
  status = 200;
  endpoint = startFakeEndpoint(() => new Response("ok", { status }));
});
afterEach(async () => {
  await endpoint.stop();
  await t.store.close();
});

/** A real worker on the app's store and clock, sending to the fake endpoint; one attempt each. */
function worker() {
  return appWorker(t, { config: { concurrency: 2 } });
}

async function call(method: string, path: string, body?: unknown) {
  const response = await t.client.json(method, path, body);
  // biome-ignore lint/suspicious/noExplicitAny: JSON answers, read field by field in assertions.
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

/** A webhook made through the API, its generated secret, and an item change per hour. */
async function deliveredChanges(count: number) {
  const made = await call("POST", "/api/webhooks", { name: "erp", url: `${endpoint.url}/hook` });
  expect(made.status).toBe(201);
  for (let i = 0; i < count; i++) {
    t.clock.now = new Date(T0.getTime() + i * 3_600_000);
    const item = { sku: `S-${i}`, name: "Bolt", quantity: i };
    expect((await call("POST", "/api/items", item)).status).toBe(201);
  }
  await worker().runOnce();
  expect(endpoint.requests).toHaveLength(count);
  return { webhookId: made.body.id as number, secret: made.body.secret as string };
}

const at = (hours: number) => new Date(T0.getTime() + hours * 3_600_000).toISOString();

describe("GET /api/deliveries", () => {
  test("lists a webhook's deliveries newest first, filtered and paged, with the body sent", async () => {
    const { webhookId } = await deliveredChanges(3);
    const all = await call("GET", `/api/deliveries?webhook=${webhookId}&limit=2`);
    expect(all.status).toBe(200);
    expect(all.body.total).toBe(3);
    expect(all.body.deliveries.map((d: { object_id: number }) => d.object_id)).toEqual([3, 2]);
    expect(all.body.deliveries[0]).toMatchObject({
      webhook_id: webhookId,
      webhook_name: "erp",
      event: "item.created",
      state: "successful",
      attempt_count: 1,
      object_model: "item",
      created_at: at(2),
      payload: { event: "created", data: { sku: "S-2" } },
    });
    const next = await call("GET", `/api/deliveries?webhook=${webhookId}&limit=2&offset=2`);
    expect(next.body.deliveries.map((d: { object_id: number }) => d.object_id)).toEqual([1]);
    const ranged = await call("GET", `/api/deliveries?since=${at(1)}&until=${at(2)}`);
    expect(ranged.body.deliveries.map((d: { object_id: number }) => d.object_id)).toEqual([2]);
    for (const query of [
      "state=successful&event=item.created&object_model=item&object_id=2",
      "states=failed,successful&object_id=2",
    ]) {
      const one = await call("GET", `/api/deliveries?${query}`);
      expect(one.body.total).toBe(1);
    }
    expect((await call("GET", "/api/deliveries?state=failed")).body.total).toBe(0);
    const blank = await call("GET", "/api/deliveries?webhook=&state=&event=&since=&limit=");
    expect({ status: blank.status, total: blank.body.total }).toEqual({ status: 200, total: 3 });
  });

  test("GET /api/deliveries/:id has its attempts: number, time, URL, status, duration, error", async () => {
    await deliveredChanges(1);
    const shown = await call("GET", "/api/deliveries/1");
    expect(shown.status).toBe(200);
    expect(shown.body.attempts).toHaveLength(1);
    expect(shown.body.attempts[0]).toMatchObject({
      number: 1,
      time: at(0),
      url: `${endpoint.url}/hook`,
      status: 200,
      outcome: "success",
      error: null,
    });
    expect(shown.body.attempts[0].duration_ms).toBeNumber();
    expect((await call("GET", "/api/deliveries/99")).status).toBe(404);
  });

  test("a bad filter or page is 400 naming each field", async () => {
    for (const [query, field] of [
      ["webhook=erp", "webhook"],
      ["state=done", "state"],
      ["states=queued,lost", "states"],
      [`event=${"x".repeat(201)}`, "event"],
      ["object_model=%E2%80%AEmeti", "object_model"],
      ["object_id=-1", "object_id"],
      ["since=yesterday", "since"],
      ["until=2026-11-27", "until"],
      [`since=${at(2)}&until=${at(1)}`, "until"],
      ["limit=0", "limit"],
      ["offset=x", "offset"],
      ["color=red", "color"],
    ] as const) {
      const answer = await call("GET", `/api/deliveries?${query}`);
      expect({
        query,
        status: answer.status,
        fields: Object.keys(answer.body.fieldErrors),
      }).toEqual({ query, status: 400, fields: [field] });
    }
  });
});

describe("POST /api/deliveries/replay", () => {
  test("replays a time range, successful ones included: the same webhook-id and bytes, a new attempt", async () => {
    const { webhookId, secret } = await deliveredChanges(4);
    // Two slots send at once: requests are compared in webhook-id order, not arrival order.
    const sent = (requests: typeof endpoint.requests) =>
      requests
        .map((r) => ({ id: r.headers["webhook-id"] ?? "", body: r.body }))
        .sort((a, b) => a.id.localeCompare(b.id));
    const first = sent(endpoint.requests);
    const rangeIds = await Promise.all(
      [2, 3].map(async (id) => (await t.store.queue.get(id))?.delivery.messageId),
    );
    t.clock.now = new Date(T0.getTime() + 10 * 3_600_000);
    const replay = await call("POST", "/api/deliveries/replay", {
      webhook: webhookId,
      since: at(1),
      until: at(3),
    });
    expect(replay).toEqual({
      status: 200,
      body: {
        replayed: 2,
        matched: 2,
        cut: false,
        limit: 100_000,
        next_since: null,
        message: "Replayed 2 of 2 matching deliveries",
      },
    });
    await worker().runOnce();
    const again = endpoint.requests.slice(4);
    expect(sent(again)).toEqual(first.filter((r) => rangeIds.includes(r.id)));
    expect(sent(again).map((r) => r.id)).toEqual([...rangeIds].sort() as string[]);
    // Signed again, at the replay's time, with the webhook's secret.
    const verifier = new StandardWebhook(secret);
    setSystemTime(t.clock.now); // the library checks the timestamp against its own clock
    try {
      for (const request of again) {
        expect(verifier.verify(request.body, request.headers)).toBeDefined();
        expect(request.headers["webhook-timestamp"]).toBe(String(t.clock.now.getTime() / 1000));
      }
    } finally {
      setSystemTime();
    }
    const shown = await call("GET", "/api/deliveries/2");
    expect(shown.body).toMatchObject({ state: "successful", attempt_count: 2 });
    expect(
      shown.body.attempts.map((a: { number: number; time: string }) => [a.number, a.time]),
    ).toEqual([
      [1, at(3)], // the worker ran once, after the fourth change
      [2, at(10)],
    ]);
    const untouched = await call("GET", "/api/deliveries/1");
    expect(untouched.body.attempts).toHaveLength(1);
  });

  test("an ordered webhook's replayed changes of one object arrive in commit order", async () => {
    const made = await call("POST", "/api/webhooks", {
      name: "ordered",
      url: `${endpoint.url}/ordered`,
      ordered: true,
    });
    expect(made.status).toBe(201);
    await call("POST", "/api/items", { sku: "O-1", name: "Bolt", quantity: 1 });
    for (const quantity of [2, 3, 4]) await call("PATCH", "/api/items/1", { quantity });
    await worker().runOnce();
    const quantities = () =>
      endpoint.requests.map(
        (r) => (JSON.parse(r.body) as { data: { quantity: number } }).data.quantity,
      );
    expect(quantities()).toEqual([1, 2, 3, 4]);
    const replay = await call("POST", "/api/deliveries/replay", { webhook: made.body.id });
    expect(replay.body.replayed).toBe(4);
    await worker().runOnce();
    expect(quantities()).toEqual([1, 2, 3, 4, 1, 2, 3, 4]);
  });

  test("replays failed ones too, and only the states asked for", async () => {
    status = 500;
    const { webhookId } = await deliveredChanges(2);
    expect((await call("GET", "/api/deliveries?state=failed")).body.total).toBe(2);
    status = 200;
    const onlySuccessful = await call("POST", "/api/deliveries/replay", {
      webhook: webhookId,
      states: ["successful"],
    });
    expect(onlySuccessful.body.replayed).toBe(0);
    const failed = await call("POST", "/api/deliveries/replay", { webhook: webhookId });
    expect(failed.body.replayed).toBe(2);
    await worker().runOnce();
    expect((await call("GET", "/api/deliveries?state=successful")).body.total).toBe(2);
  });

  test("bad input is 400 naming the field; an empty filter replays nothing", async () => {
    await deliveredChanges(1);
    for (const [body, field] of [
      [{ webhook: "erp" }, "webhook"],
      [{ since: "now" }, "since"],
      [{ since: at(0), until: 5 }, "until"],
      [{ webhook: 1, states: ["queued"] }, "states"],
      [{ webhook: 1, state: "failed" }, "state"],
      [{ webhook: 1, ids: [1] }, "ids"],
    ] as const) {
      const answer = await call("POST", "/api/deliveries/replay", body);
      expect({
        field,
        status: answer.status,
        fields: Object.keys(answer.body.fieldErrors ?? {}),
      }).toEqual({ field, status: 400, fields: [field] });
    }
    for (const body of [{}, { states: ["failed"] }]) {
      const answer = await call("POST", "/api/deliveries/replay", body);
      expect(answer.status).toBe(400);
      expect(answer.body.error).toStartWith("Nothing to replay");
    }
    expect(endpoint.requests).toHaveLength(1);
    expect((await call("GET", "/api/deliveries?state=successful")).body.total).toBe(1);
  });
});

describe("POST /api/deliveries/retry", () => {
  test("retries failed deliveries by ids or by filter; successful ones are left alone", async () => {
    status = 500;
    const { webhookId } = await deliveredChanges(3);
    status = 200;
    const byIds = await call("POST", "/api/deliveries/retry", { ids: [1, 99] });
    expect(byIds.body).toMatchObject({ retried: 1, matched: 2, cut: false });
    await worker().runOnce();
    expect((await call("GET", "/api/deliveries/1")).body).toMatchObject({
      state: "successful",
      attempt_count: 2,
    });
    const byFilter = await call("POST", "/api/deliveries/retry", {
      webhook: webhookId,
      since: at(2),
    });
    expect(byFilter.body).toMatchObject({ retried: 1, matched: 1 });
    await worker().runOnce();
    const states = (await call("GET", "/api/deliveries")).body.deliveries.map(
      (d: { object_id: number; state: string }) => [d.object_id, d.state],
    );
    expect(states).toEqual([
      [3, "successful"],
      [2, "failed"],
      [1, "successful"],
    ]);
    expect(endpoint.requests).toHaveLength(5);
  });

  test("bad input is 400 naming the field", async () => {
    for (const [body, field] of [
      [{ ids: [] }, "ids"],
      [{ ids: [0] }, "ids"],
      [{ ids: "1,2" }, "ids"],
      [{ ids: [1], webhook: 1 }, "ids"],
      [{ states: ["failed"] }, "states"],
      [{ object_id: "x" }, "object_id"],
    ] as const) {
      const answer = await call("POST", "/api/deliveries/retry", body);
      expect({
        field,
        status: answer.status,
        fields: Object.keys(answer.body.fieldErrors ?? {}),
      }).toEqual({ field, status: 400, fields: [field] });
    }
    expect((await call("POST", "/api/deliveries/retry", {})).status).toBe(400);
  });
});
