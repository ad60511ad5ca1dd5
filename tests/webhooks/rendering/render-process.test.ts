import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { cpSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { buildPayload } from "../../../lib/webhooks/events/payload.ts";
import { renderDelivery } from "../../../lib/webhooks/rendering/render.ts";
import {
  createTemplateRenderer,
  type TemplateRenderer,
} from "../../../lib/webhooks/rendering/render-process.ts";
import { unboundedTemplate } from "../../../lib/webhooks/rendering/template-trial.ts";
import { change } from "../../fakes/change.ts";
import { tempDirs } from "../../fakes/temp-dirs.ts";
import { LOOP_BOMB, STOPPED, STRING_BOMB } from "../../fakes/template-bombs.ts";

// Each test starts a renderer process (about 0.1 s, seconds on a loaded machine).
setDefaultTimeout(60_000);

const body = buildPayload(change());
const plain = { url: "https://hooks.example/in", headers: [] as Array<[string, string]> };
const renderers: TemplateRenderer[] = [];
afterEach(() => {
  for (const renderer of renderers.splice(0)) renderer.close();
});

function renderer(deadlineMs?: number): TemplateRenderer {
  const created = createTemplateRenderer({ deadlineMs });
  renderers.push(created);
  return created;
}

/** The longest gap between turns of this thread while `work` runs. */
async function longestStall<T>(work: Promise<T>): Promise<{ result: T; stallMs: number }> {
  let last = performance.now();
  let stallMs = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    stallMs = Math.max(stallMs, now - last);
    last = now;
  }, 5);
  try {
    return { result: await work, stallMs };
  } finally {
    clearInterval(ticker);
  }
}

describe("createTemplateRenderer()", () => {
  test("renders as renderDelivery does, plain webhooks without the child", async () => {
    const r = renderer();
    const templated = {
      url: "https://hooks.example/{{ data.sku }}",
      headers: [["X-Q", "{{ data.quantity }}"]] as Array<[string, string]>,
      bodyTemplate: '{"name": {{ data.name | tojson }}}',
    };
    expect(await r.render(templated, body)).toMatchObject(renderDelivery(templated, body));
    const none = { ...plain, bodyTemplate: null };
    expect(await r.render(none, body)).toMatchObject(renderDelivery(none, body));
  });

  test.each([
    ["a loop multiplying strings", LOOP_BOMB, "rendering took longer than"],
    ["one huge string", STRING_BOMB, "out of memory (at most 64 MiB)"],
  ])(
    "%s ends as a template error with the reason, this thread free meanwhile; the next render works",
    async (_name, template, reason) => {
      const r = renderer();
      const started = performance.now();
      const { result, stallMs } = await longestStall(
        Promise.all([
          r.render({ ...plain, bodyTemplate: template }, body),
          r.render({ ...plain, bodyTemplate: "{{ data.sku }}" }, body),
        ]),
      );
      const [bomb, after] = result;
      expect(bomb.templateError).toContain(reason);
      expect(bomb).toMatchObject({ payload: "", context: body });
      expect(after).toMatchObject({ payload: "A-1", templateError: null });
      // Bounds far below the damage (30 s and more), generous for a loaded 2-core machine.
      expect(performance.now() - started).toBeLessThan(10_000);
      expect(stallMs).toBeLessThan(1000);
    },
  );

  test("many webhooks' templates are answered in order, each its own", async () => {
    const r = renderer();
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        r.render({ ...plain, bodyTemplate: `${i}:{{ data.sku }}` }, body),
      ),
    );
    expect(results.map((x) => x.payload)).toEqual(Array.from({ length: 50 }, (_, i) => `${i}:A-1`));
  });

  test("a closed renderer fails what is left, recorded as template errors", async () => {
    const r = renderer();
    const pending = r.render({ ...plain, bodyTemplate: LOOP_BOMB }, body);
    r.close();
    expect((await pending).templateError).toBe("Template error: the template renderer is closed");
  });
});

describe("unboundedTemplate() at save", () => {
  test("refuses the bombs, naming the part; lets a template that is only wrong for some data through", async () => {
    const r = renderer();
    const webhook = { ...plain, bodyTemplate: null };
    const bomb = await unboundedTemplate({ ...webhook, bodyTemplate: LOOP_BOMB }, r.render);
    expect(bomb?.field).toBe("bodyTemplate");
    expect(bomb?.problem).toMatch(STOPPED);
    expect(bomb?.problem).toStartWith("with a sample item, rendering took longer than");
    expect(bomb?.problem).toEndWith(": a template must stay within the limits for any change");
    expect(
      await unboundedTemplate({ ...webhook, headers: [["X-A", STRING_BOMB]] }, r.render),
    ).toMatchObject({ field: "headers" });
    expect(
      await unboundedTemplate({ ...webhook, bodyTemplate: "{{ data.nothing.here }}" }, r.render),
    ).toBeNull();
  });
});

describe("a renderer whose process cannot start", () => {
  test("fails the waiting renders with the reason instead of restarting forever", async () => {
    const r = createTemplateRenderer({ child: join(import.meta.dir, "no-such-child.ts") });
    renderers.push(r);
    const rendered = await r.render({ ...plain, bodyTemplate: "{{ data.sku }}" }, body);
    expect(rendered.templateError).toStartWith(
      "Template error: the template renderer could not start (exit code 1)",
    );
  });
});

describe("a checkout in a folder whose name has a space", () => {
  const tempDir = tempDirs("render-process-");

  test("starts its renderer process (the child's path is the folder's name, not its URL form)", async () => {
    const root = join(tempDir(), "my projects", "inventory");
    const repo = join(import.meta.dir, "..", "..", "..");
    cpSync(join(repo, "lib"), join(root, "lib"), { recursive: true });
    symlinkSync(join(repo, "node_modules"), join(root, "node_modules"));
    const script = `
      import { createTemplateRenderer } from "./lib/webhooks/rendering/render-process.ts";
      const renderer = createTemplateRenderer();
      const rendered = await renderer.render(
        { url: "https://hooks.example/{{ data.id }}", headers: [], bodyTemplate: null },
        '{"data":{"id":3}}',
      );
      renderer.close();
      console.log(JSON.stringify(rendered));`;
    const run = Bun.spawn([process.execPath, "-e", script], { cwd: root, stdout: "pipe" });
    const rendered = JSON.parse(await new Response(run.stdout).text());
    expect(await run.exited).toBe(0);
    expect(rendered).toMatchObject({ url: "https://hooks.example/3", templateError: null });
  });
});
