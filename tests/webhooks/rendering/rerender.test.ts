import { describe, expect, test } from "bun:test";
import { buildPayload } from "../../../lib/webhooks/events/payload.ts";
import { renderDelivery } from "../../../lib/webhooks/rendering/render.ts";
import type { RenderTemplates } from "../../../lib/webhooks/rendering/render-process.ts";
import {
  rerenderFailures,
  type TemplateFailure,
} from "../../../lib/webhooks/rendering/rerender.ts";
import { change } from "../../fakes/change.ts";

/** Renders in this process (the templates here are cheap), counting the renders. */
function counting(): { render: RenderTemplates; count: () => number } {
  let count = 0;
  return {
    render: async (webhook, body) => {
      count += 1;
      return { ...renderDelivery(webhook, body), matched: true, spentMs: 0 };
    },
    count: () => count,
  };
}

function failure(id: number, overrides: Partial<TemplateFailure["webhook"]> = {}): TemplateFailure {
  return {
    id,
    context: buildPayload(change()),
    webhook: {
      url: "https://hooks.example/{{ data.sku }}",
      headers: [],
      bodyTemplate: "{{ data.sku }}!",
      conditions: null,
      ...overrides,
    },
  };
}

describe("rerenderFailures()", () => {
  test("renders each from its kept change with the webhook as it is now", async () => {
    const { render } = counting();
    expect(await rerenderFailures([failure(1)], render)).toEqual([
      {
        id: 1,
        rendered: {
          payload: "A-1!",
          url: "https://hooks.example/A-1",
          headers: null,
          context: buildPayload(change()),
          templateError: null,
        },
      },
    ]);
  });

  test("a template still broken, conditions that no longer match, a change that cannot be read: each says why", async () => {
    const { render, count } = counting();
    const unreadable = { ...failure(3), context: "{not json" };
    const results = await rerenderFailures(
      [
        failure(1, { bodyTemplate: "{{ data.sku | nosuch }}" }),
        failure(2, { conditions: { and: [{ attr: "quantity", value: 100, op: "gte" }] } }),
        unreadable,
      ],
      render,
    );
    const errors = results.map((r) => ("error" in r ? r.error : ""));
    expect(results.map((r) => r.id)).toEqual([1, 2, 3]);
    expect(errors[0]).toStartWith("Template error in the body: line 1, column 15: unknown filter");
    expect(errors[1]).toBe("Condition error: the webhook's conditions no longer match this change");
    expect(errors[2]).toBe("Template error: the change kept for this delivery cannot be read");
    // Conditions without a regex are evaluated here: no render for the one that does not match.
    expect(count()).toBe(1);
  });

  test("stops once its time is up: the rest are left as they were, for the next retry", async () => {
    const { render, count } = counting();
    let clock = 0;
    const results = await rerenderFailures([failure(1), failure(2), failure(3)], render, {
      withinMs: 5000,
      now: () => {
        clock += 2000;
        return clock;
      },
    });
    expect(results.map((r) => r.id)).toEqual([1, 2]);
    expect(count()).toBe(2);
  });
});
