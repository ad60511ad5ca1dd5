import { describe, expect, test } from "bun:test";
import { subscribes } from "../../../lib/webhooks/events/events.ts";
import {
  actionOf,
  buildPayload,
  netboxTimestamp,
  newMessageId,
} from "../../../lib/webhooks/events/payload.ts";

describe("buildPayload", () => {
  test("buildPayload() produces NetBox's default body shape", () => {
    const body = buildPayload({
      event: "item.updated",
      model: "item",
      username: "jstretch",
      requestId: "fdbca812-3142-4783-b364-2e2bd5c16c6a",
      data: { id: 19, name: "Site 1" },
      prechange: { name: "Site 0" },
      postchange: { name: "Site 1" },
      timestamp: new Date("2021-03-09T17:55:33.968Z"),
    });
    expect(JSON.parse(body)).toEqual({
      event: "updated",
      timestamp: "2021-03-09 17:55:33.968000+00:00",
      model: "item",
      username: "jstretch",
      request_id: "fdbca812-3142-4783-b364-2e2bd5c16c6a",
      data: { id: 19, name: "Site 1" },
      snapshots: { prechange: { name: "Site 0" }, postchange: { name: "Site 1" } },
    });
    // Key order as NetBox sends it.
    expect(Object.keys(JSON.parse(body))).toEqual([
      "event",
      "timestamp",
      "model",
      "username",
      "request_id",
      "data",
      "snapshots",
    ]);
  });

  test("buildPayload() turns missing snapshots into null", () => {
    const body = JSON.parse(
      buildPayload({
        event: "ping",
        model: "webhook",
        username: "admin",
        requestId: "r",
        data: undefined,
        prechange: undefined,
        postchange: undefined,
        timestamp: new Date(0),
      }),
    );
    expect(body.event).toBe("ping");
    expect(body.data).toBeNull();
    expect(body.snapshots).toEqual({ prechange: null, postchange: null });
  });

  test("netboxTimestamp() formats like Python's isoformat with microseconds", () => {
    expect(netboxTimestamp(new Date("2021-03-09T17:55:33.968Z"))).toBe(
      "2021-03-09 17:55:33.968000+00:00",
    );
    expect(netboxTimestamp(new Date(0))).toBe("1970-01-01 00:00:00.000000+00:00");
  });

  test("actionOf() keeps the part after the model", () => {
    expect(actionOf("item.created")).toBe("created");
    expect(actionOf("ping")).toBe("ping");
  });
});

describe("newMessageId", () => {
  test("newMessageId() is msg_ and 24 base62 characters, different every time", () => {
    const ids = new Set(Array.from({ length: 1000 }, () => newMessageId()));
    expect(ids.size).toBe(1000);
    for (const id of ids) expect(id).toMatch(/^msg_[0-9A-Za-z]{24}$/);
  });

  test("newMessageId() skips bytes that would bias the alphabet", () => {
    let call = 0;
    const id = newMessageId((n) => {
      call++;
      // First batch: only rejected bytes (248..255); then zeros ("0").
      return new Uint8Array(n).fill(call === 1 ? 250 : 0);
    }, 0);
    expect(id).toBe(`msg_${"0".repeat(24)}`);
  });

  test("newMessageId() starts with the time, so ids made later sort later", () => {
    const zeros = (n: number) => new Uint8Array(n);
    expect(newMessageId(zeros, 61)).toBe(`msg_0000000z${"0".repeat(16)}`);
    expect(newMessageId(zeros, 62)).toBe(`msg_00000010${"0".repeat(16)}`);
    const times = [0, 61, 62, 1_700_000_000_000, 1_700_000_000_001, Date.now(), 62 ** 8 - 1];
    const ids = times.map((t) => newMessageId(undefined, t));
    expect([...ids].sort()).toEqual(ids);
  });
});

describe("subscribes", () => {
  test('subscribes() matches listed events and "*", never "ping"', () => {
    expect(subscribes(["item.created"], "item.created")).toBe(true);
    expect(subscribes(["item.created"], "item.deleted")).toBe(false);
    expect(subscribes(["*"], "item.deleted")).toBe(true);
    expect(subscribes(["*"], "ping")).toBe(false);
    expect(subscribes([], "item.created")).toBe(false);
  });

  test('subscribes(): an operational event only by name, never through "*"', () => {
    expect(subscribes(["*"], "webhook.disabled")).toBe(false);
    expect(subscribes(["*"], "delivery.exhausted")).toBe(false);
    expect(subscribes(["*", "delivery.exhausted"], "delivery.exhausted")).toBe(true);
    expect(subscribes(["webhook.disabled"], "webhook.disabled")).toBe(true);
    expect(subscribes(["webhook.disabled"], "item.created")).toBe(false);
  });
});
