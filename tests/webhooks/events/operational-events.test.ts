import { describe, expect, test } from "bun:test";
import { receivers } from "../../../lib/webhooks/events/fan-out.ts";
import {
  disabledEvent,
  exhaustedEvent,
  operationalChange,
} from "../../../lib/webhooks/events/operational-events.ts";
import { buildPayload } from "../../../lib/webhooks/events/payload.ts";
import type { Claim, Outcome } from "../../../lib/webhooks/model.ts";
import { claimFixture } from "../../fakes/claim.ts";
import { attemptRecord } from "../../fakes/delivery.ts";

function claimOf(event: string): Claim {
  const delivery = { messageId: "msg_1", event, payload: "{}", objectId: 7, leaseExpiresAt: 1 };
  return claimFixture({ id: 17, attempt: 3, webhook: { id: 4, name: "crm" }, delivery });
}

describe("exhaustedEvent()", () => {
  const failed: Outcome = { state: "failed" };
  const record = { ...attemptRecord(500), error: "x".repeat(5000) };

  test("a delivery ending failed: its facts, the error cut to 1000 characters, never for its own webhook", () => {
    const event = exhaustedEvent({ claim: claimOf("item.updated"), record, outcome: failed });
    expect(event?.event).toBe("delivery.exhausted");
    expect(event?.notFor).toBe(4);
    expect(JSON.parse(event?.data ?? "")).toEqual({
      id: 17,
      message_id: "msg_1",
      event: "item.updated",
      webhook_id: 4,
      webhook_name: "crm",
      attempts: 3,
      last_status: 500,
      last_error: "x".repeat(1000),
      object_model: "item",
      object_id: 7,
    });
  });

  test("none for a retry, a success, or a delivery of an operational event (no loop)", () => {
    const claim = claimOf("item.updated");
    expect(exhaustedEvent({ claim, record, outcome: { state: "queued", nextAttemptAt: 1 } })).toBe(
      null,
    );
    expect(exhaustedEvent({ claim, record, outcome: { state: "successful" } })).toBe(null);
    for (const event of ["delivery.exhausted", "webhook.disabled"]) {
      expect(exhaustedEvent({ claim: claimOf(event), record, outcome: failed })).toBe(null);
    }
  });
});

test("an operational event becomes NetBox's body, and fan-out skips the webhook it is about", () => {
  const recorded = disabledEvent(
    { id: 4, name: "crm", url: "https://crm.example/h" },
    { reason: "Disabled automatically: the endpoint answered 410 Gone", kind: "gone", at: 0 },
  );
  const change = operationalChange({ ...recorded, id: 1, createdAt: 0 }, "req-1");
  expect(JSON.parse(buildPayload(change))).toEqual({
    event: "disabled",
    timestamp: "1970-01-01 00:00:00.000000+00:00",
    model: "webhook",
    username: "worker",
    request_id: "req-1",
    data: {
      id: 4,
      name: "crm",
      url: "https://crm.example/h",
      reason: "Disabled automatically: the endpoint answered 410 Gone",
      reason_kind: "gone",
      disabled_at: "1970-01-01T00:00:00.000Z",
    },
    snapshots: { prechange: null, postchange: null },
  });
  const subscribed = [4, 5, 6].map((id) => ({ id, events: ["webhook.disabled"] }));
  expect(receivers(subscribed, "webhook.disabled", { except: change.notFor })).toEqual([5, 6]);
});
