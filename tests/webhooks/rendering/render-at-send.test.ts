import { describe, expect, test } from "bun:test";
import type { Claim, RenderedDelivery, Webhook } from "../../../lib/webhooks/model.ts";
import { type Attempt, renderBeforeSend } from "../../../lib/webhooks/rendering/render-at-send.ts";
import {
  failure,
  OWN_BUDGET_SPENT,
  type RenderResult,
  type RenderTemplates,
} from "../../../lib/webhooks/rendering/render-process.ts";
import type { SendResult } from "../../../lib/webhooks/sending/send.ts";
import { claimFixture } from "../../fakes/claim.ts";

const CHANGE = '{"event":"created","model":"item","data":{"id":1,"sku":"A-1"},"snapshots":{}}';

function pendingClaim(): Claim {
  return claimFixture({
    delivery: { renderPending: true, payload: CHANGE, context: CHANGE },
    webhook: { bodyTemplate: "{{ data.sku }}" },
  });
}

/** The sender's attempts as seen: which claims reached it. */
function recordingAttempt() {
  const sent: Claim[] = [];
  const attempt: Attempt = async (claim) => {
    sent.push(claim);
    return { outcome: "success", statusCode: 200, record: {} as SendResult["record"] };
  };
  return { attempt, sent };
}

function rendering(result: Partial<RenderResult>): RenderTemplates {
  return async () => ({
    payload: "A-1",
    url: null,
    headers: null,
    context: CHANGE,
    templateError: null,
    matched: true,
    spentMs: 1,
    ...result,
  });
}

function setUp(
  render: RenderTemplates,
  keep: (claim: Claim, r: RenderedDelivery) => Promise<boolean>,
  webhook: (id: number) => Promise<Webhook | null> = async (id) => ({
    ...claimFixture().webhook,
    id,
  }),
) {
  const { attempt, sent } = recordingAttempt();
  const send = renderBeforeSend(attempt, { render, keep, webhook, now: () => 1 });
  return { send, sent };
}

describe("renderBeforeSend()", () => {
  test("a delivery rendered at enqueue goes straight to the attempt", async () => {
    const { send, sent } = setUp(rendering({}), async () => {
      throw new Error("not asked");
    });
    const claim = claimFixture();
    await send(claim, {});
    expect(sent).toEqual([claim]);
  });

  test("one left to render is rendered, kept, then sent with what rendered", async () => {
    const kept: RenderedDelivery[] = [];
    const { send, sent } = setUp(rendering({}), async (_claim, rendered) => {
      kept.push(rendered);
      return true;
    });
    await send(pendingClaim(), { maxTimeoutMs: 10_000 });
    expect(kept).toEqual([
      { payload: "A-1", url: null, headers: null, context: CHANGE, templateError: null },
    ]);
    expect(sent.map((c) => [c.delivery.payload, c.delivery.renderPending])).toEqual([
      ["A-1", false],
    ]);
  });

  test.each([
    [
      "past its own CPU budget",
      rendering(failure("rendering took longer than 100 ms and was stopped", CHANGE)),
      "template_error",
      OWN_BUDGET_SPENT,
    ],
    [
      "whose conditions do not match",
      rendering({ matched: false }),
      "template_error",
      "Condition error: the webhook's conditions do not match this change (checked when it was rendered, before the send); nothing was sent",
    ],
  ])("one %s sends nothing and says why", async (_name, render, outcome, error) => {
    const { send, sent } = setUp(render, async () => true);
    const result = await send(pendingClaim(), {});
    expect(sent).toEqual([]);
    expect(result).toMatchObject({ outcome, statusCode: null, record: { outcome, error } });
  });

  test("one starved of CPU again sends nothing and uses no attempt: given back (null), nothing kept", async () => {
    const kept: RenderedDelivery[] = [];
    const starved = rendering({
      ...failure(
        "rendering took longer than 5000 ms (the machine was busy) and was stopped",
        CHANGE,
      ),
      busy: true,
    });
    const { send, sent } = setUp(starved, async (_claim, rendered) => {
      kept.push(rendered);
      return true;
    });
    expect(await send(pendingClaim(), {})).toBeNull();
    expect(sent).toEqual([]);
    expect(kept).toEqual([]);
  });

  test("what rendered is never sent unkept: the claim gone, or the store failing", async () => {
    const gone = setUp(rendering({}), async () => false);
    expect((await gone.send(pendingClaim(), {}))?.outcome).toBe("lease_expired");
    const failing = setUp(rendering({}), async () => {
      throw new Error("database is locked");
    });
    const result = await failing.send(pendingClaim(), {});
    expect(result?.record.error).toBe(
      "Rendering before the send: what rendered could not be kept (database is locked); nothing was sent",
    );
    expect([...gone.sent, ...failing.sent]).toEqual([]);
  });

  test("one whose webhook was disabled, deleted or unreadable once rendered is kept, not sent: given back (null)", async () => {
    const claim = pendingClaim();
    const now = [
      async () => ({ ...claim.webhook, enabled: false }),
      async () => null,
      async () => {
        throw new Error("database is locked");
      },
    ];
    for (const webhook of now) {
      const kept: RenderedDelivery[] = [];
      const { send, sent } = setUp(
        rendering({}),
        async (_claim, rendered) => {
          kept.push(rendered);
          return true;
        },
        webhook,
      );
      expect(await send(pendingClaim(), { maxTimeoutMs: 10_000 })).toBeNull();
      expect(kept).toHaveLength(1);
      expect(sent).toEqual([]);
    }
  });

  test("one whose render left the lease too short for the request is kept, not sent: given back (null), no attempt used", async () => {
    const kept: RenderedDelivery[] = [];
    const { send, sent } = setUp(rendering({}), async (_claim, rendered) => {
      kept.push(rendered);
      return true;
    });
    expect(await send(pendingClaim(), { maxTimeoutMs: 50 })).toBeNull();
    expect(kept).toHaveLength(1);
    expect(sent).toEqual([]);
  });
});
