import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { type FanOutCandidate, planDeliveries } from "../../../lib/webhooks/events/fan-out.ts";
import { buildPayload } from "../../../lib/webhooks/events/payload.ts";
import {
  createTemplateRenderer,
  RENDER_DEADLINE_MS,
  type TemplateRenderer,
} from "../../../lib/webhooks/rendering/render-process.ts";
import { unboundedTemplate } from "../../../lib/webhooks/rendering/template-trial.ts";
import { change } from "../../fakes/change.ts";
import { LOOP_BOMB } from "../../fakes/template-bombs.ts";
import { fanOutCandidate } from "../../fakes/webhook.ts";

// Renderer processes start in about 0.1 s alone, seconds on a loaded 2-core machine.
setDefaultTimeout(60_000);

/** Cheap with the save-time sample (quantity 3); quantity 2000 costs about 60 ms of CPU here. */
const SLOW_FOR_BIG_QUANTITIES =
  '{% set s = "x" * 100000 %}{% for i in range(data.quantity) %}{% set t = s * 10 %}{% endfor %}ok';

const renderers: TemplateRenderer[] = [];
afterEach(() => {
  for (const renderer of renderers.splice(0)) renderer.close();
});

const STOPPED_CHILD = join(import.meta.dir, "..", "..", "fakes", "stopped-render-child.ts");

function renderer(size?: number, child?: string): TemplateRenderer {
  const created = createTemplateRenderer({ size, child });
  renderers.push(created);
  return created;
}

const hook = fanOutCandidate;

describe("planDeliveries(): each webhook's CPU budget its own, the change's time shared", () => {
  test("40 templated webhooks, one costly for this change's data: it alone fails, saying whose budget it was", async () => {
    const big = change({ data: { id: 7, sku: "B-7", name: "Big", quantity: 20_000 } });
    const hooks = [
      hook(1, SLOW_FOR_BIG_QUANTITIES),
      ...Array.from({ length: 39 }, (_, i) => hook(i + 2, "{{ data.sku }}")),
    ];
    const planned = await planDeliveries(hooks, big, { render: renderer().render });
    expect(planned.map((p) => p.webhookId)).toEqual(hooks.map((h) => h.id));
    // Stopped at its own 100 ms of CPU; or, the machine too busy for CPU time to tell, at its
    // wall-clock ceiling first and left to the worker (which stops it at the same budget).
    if (planned[0]?.renderLater !== true) {
      expect(planned[0]?.templateError).toBe(
        `Template error: this webhook's templates took more than their ${RENDER_DEADLINE_MS} ms of CPU for this change (each webhook's own budget; other webhooks' renders do not count against it) and were stopped`,
      );
    }
    // The others rendered, or (a busy machine, the change's time gone) were left to the worker:
    // never failed.
    for (const other of planned.slice(1)) {
      expect(other.templateError).toBeNull();
      if (!other.renderLater) expect(other.payload).toBe("B-7");
      else expect(other.context).toBe(buildPayload(big));
    }
  });

  test("a render starved of CPU (its process stopped) is left to the worker, not failed", async () => {
    const widget = change({ data: { id: 1, sku: "A-1", name: "Widget", quantity: 3 } });
    const planned = await planDeliveries([hook(1, "{{ data.sku }}"), hook(2, null)], widget, {
      render: renderer(1, STOPPED_CHILD).render,
    });
    expect(planned).toEqual([
      {
        webhookId: 1,
        payload: buildPayload(widget),
        url: null,
        headers: null,
        context: buildPayload(widget),
        templateError: null,
        renderLater: true,
      },
      {
        webhookId: 2,
        payload: buildPayload(widget),
        url: null,
        headers: null,
        context: null,
        templateError: null,
      },
    ]);
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
