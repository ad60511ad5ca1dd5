import { describe, expect, test } from "bun:test";
import { makeChangePlan, replan } from "../../../lib/webhooks/rendering/change-plan.ts";
import {
  CHANGE_WALL_CEILING_MS,
  type RenderTemplates,
} from "../../../lib/webhooks/rendering/render-process.ts";
import { change } from "../../fakes/change.ts";
import { fanOutCandidate } from "../../fakes/webhook.ts";

const hook = fanOutCandidate;

/** A renderer that answers the template's own text, reporting `costMs` of CPU per template. */
function fakeRenderer(costMs: number) {
  const rendered: number[] = [];
  const render: RenderTemplates = async (webhook, body) => {
    const templated = webhook.bodyTemplate !== null;
    if (templated) rendered.push(Number(webhook.url.split("/").at(-1)));
    return {
      payload: webhook.bodyTemplate ?? body,
      url: null,
      headers: null,
      context: templated ? body : null,
      templateError: null,
      matched: true,
      spentMs: templated ? costMs : 0,
    };
  };
  return { render, rendered };
}

describe("replan()", () => {
  test("keeps what was planned for unchanged webhooks and renders only edited or new ones", async () => {
    const { render, rendered } = fakeRenderer(1);
    const plan = await makeChangePlan([hook(1, "one"), hook(2, "two"), hook(3, null)], change(), {
      render,
    });
    expect(rendered).toEqual([1, 2]);
    const now = [hook(1, "one"), hook(2, "two, edited"), hook(4, "four")];
    const planned = await replan(plan, now, change(), { render });
    expect(rendered).toEqual([1, 2, 2, 4]);
    // 3 was disabled or removed since: nothing for it.
    expect(planned.map((d) => [d.webhookId, d.payload])).toEqual([
      [1, "one"],
      [2, "two, edited"],
      [4, "four"],
    ]);
  });

  test("a webhook new since the plan gets only what the plan left of the change's time", async () => {
    const { render, rendered } = fakeRenderer(1);
    const made = await makeChangePlan([hook(1, "one")], change(), { render });
    // As if the plan's renders had taken all of the change's wall-clock time.
    const plan = { ...made, spentMs: CHANGE_WALL_CEILING_MS };
    const planned = await replan(plan, [hook(1, "one"), hook(2, "two")], change(), { render });
    expect(rendered).toEqual([1]);
    expect(planned[1]).toMatchObject({ webhookId: 2, templateError: null, renderLater: true });
  });

  test("a plan of another change, or for another webhook only, is not used", async () => {
    const { render, rendered } = fakeRenderer(1);
    const plan = await makeChangePlan([hook(1, "one")], change(), { render });
    const other = change({ requestId: "another request" });
    await replan(plan, [hook(1, "one")], other, { render });
    await replan(plan, [hook(1, "one")], change(), { render, only: 1 });
    expect(rendered).toEqual([1, 1, 1]);
  });
});
