import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { type FanOutCandidate, planDeliveries } from "../../../lib/webhooks/events/fan-out.ts";
import { buildPayload } from "../../../lib/webhooks/events/payload.ts";
import {
  CHANGE_RENDER_BUDGET_MS,
  CHANGE_WALL_CEILING_MS,
  createTemplateRenderer,
  type TemplateRenderer,
} from "../../../lib/webhooks/rendering/render-process.ts";
import { unboundedTemplate } from "../../../lib/webhooks/rendering/template-trial.ts";
import { change } from "../../fakes/change.ts";
import { LOOP_BOMB } from "../../fakes/template-bombs.ts";

// Renderer processes start in about 0.1 s alone, seconds on a loaded 2-core machine.
setDefaultTimeout(60_000);

/** Cheap with the save-time sample (quantity 3); quantity 2000 costs about 60 ms of CPU here. */
const SLOW_FOR_BIG_QUANTITIES =
  '{% set s = "x" * 100000 %}{% for i in range(data.quantity) %}{% set t = s * 10 %}{% endfor %}ok';

const renderers: TemplateRenderer[] = [];
afterEach(() => {
  for (const renderer of renderers.splice(0)) renderer.close();
});

function renderer(size?: number): TemplateRenderer {
  const created = createTemplateRenderer({ size });
  renderers.push(created);
  return created;
}

function hook(id: number, bodyTemplate: string | null): FanOutCandidate {
  return {
    id,
    events: ["*"],
    url: `https://hooks.example/${id}`,
    headers: [],
    bodyTemplate,
    conditions: null,
  };
}

describe("planDeliveries(): one render budget per change, across its webhooks", () => {
  test("ten templates slow for this change's data cost the change its budget, not ten deadlines", async () => {
    const big = change({ data: { id: 7, sku: "B-7", name: "Big", quantity: 2000 } });
    const hooks = Array.from({ length: 10 }, (_, i) => hook(i + 1, SLOW_FOR_BIG_QUANTITIES));
    const planned = await planDeliveries([...hooks, hook(11, null)], big, {
      render: renderer().render,
    });
    expect(planned.map((p) => p.webhookId)).toEqual(Array.from({ length: 11 }, (_, i) => i + 1));
    const rendered = planned.filter((p) => p.templateError === null && p.webhookId <= 10);
    const outOfBudget = planned.filter((p) =>
      p.templateError?.includes("before this webhook's turn"),
    );
    // Each render costs about 60 ms of CPU: the budget holds three or four of them. On a busy
    // machine the change's wall-clock ceiling comes first and fewer render, none at worst.
    expect(rendered.length).toBeLessThanOrEqual(Math.ceil(CHANGE_RENDER_BUDGET_MS / 40));
    expect(outOfBudget.length).toBeGreaterThanOrEqual(10 - Math.ceil(CHANGE_RENDER_BUDGET_MS / 40));
    expect(outOfBudget[0]?.templateError).toBe(
      `Template error: this change's templates had used their ${CHANGE_RENDER_BUDGET_MS} ms of CPU (for all its webhooks; ${CHANGE_WALL_CEILING_MS} ms of wall-clock time on a busy machine) before this webhook's turn; retry the delivery to render it again`,
    );
    // The context is kept, so a retry can render it again; the plain webhook is not held up.
    expect(outOfBudget[0]?.context).toBe(buildPayload(big));
    expect(planned.at(-1)).toMatchObject({ webhookId: 11, templateError: null, context: null });
  });

  test("the same templates with small data all render", async () => {
    const small = change({ data: { id: 1, sku: "S-1", name: "Small", quantity: 1 } });
    const hooks = Array.from({ length: 10 }, (_, i) => hook(i + 1, SLOW_FOR_BIG_QUANTITIES));
    const planned = await planDeliveries(hooks, small, { render: renderer().render });
    expect(planned.map((p) => [p.webhookId, p.payload, p.templateError])).toEqual(
      hooks.map((h) => [h.id, "ok", null]),
    );
  });

  test("a regex condition is evaluated in the renderer, with the change's snapshots", async () => {
    const r = renderer();
    const regex = (value: string): FanOutCandidate => ({
      ...hook(1, null),
      conditions: { and: [{ attr: "sku", value, op: "regex" }] },
    });
    const widget = change({ data: { id: 1, sku: "A-1", name: "Widget", quantity: 3 } });
    expect(await planDeliveries([regex("^A-")], widget, { render: r.render })).toHaveLength(1);
    expect(await planDeliveries([regex("^B-")], widget, { render: r.render })).toEqual([]);
    const [unrunnable] = await planDeliveries([regex("(?<=A)-1")], widget, { render: r.render });
    expect(unrunnable?.templateError).toStartWith(
      'Condition error: the regex "(?<=A)-1" cannot run',
    );
  });
});

describe("the renderer pool", () => {
  test("a render stuck until its deadline does not hold up another change's render", async () => {
    const r = renderer(2);
    const body = buildPayload(change());
    // Both processes ready: the pool's size is what this is about, not how long a process
    // takes to start on a busy machine.
    await r.prepare();
    const settled: string[] = [];
    const stuck = r.render({ ...hook(1, LOOP_BOMB) }, body).then(() => settled.push("stuck"));
    const quick = r.render({ ...hook(2, "{{ data.sku }}") }, body).then((result) => {
      settled.push("quick");
      return result;
    });
    expect((await quick).payload).toBe("A-1");
    await stuck;
    expect(settled).toEqual(["quick", "stuck"]);
  });

  test("a Preview's slow templates, in a renderer of their own, never delay a change", async () => {
    const forChanges = renderer(1);
    const forPeople = renderer(1);
    const settled: string[] = [];
    const slowHeaders: Array<[string, string]> = Array.from({ length: 20 }, (_, i) => [
      `X-Slow-${i}`,
      LOOP_BOMB,
    ]);
    const trial = unboundedTemplate(
      { url: "https://hooks.example/", headers: slowHeaders, bodyTemplate: null },
      forPeople.render,
    ).then((found) => {
      settled.push("preview");
      return found;
    });
    const planned = await planDeliveries([hook(1, "{{ data.sku }}")], change(), {
      render: forChanges.render,
    });
    settled.push("change");
    expect(planned[0]?.payload).toBe("A-1");
    expect((await trial)?.field).toBe("headers");
    expect(settled).toEqual(["change", "preview"]);
  });
});
